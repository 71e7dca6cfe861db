//! The process's log output: tracing's subscriber on standard error, `RUST_LOG` filtering,
//! and the lines gathered in memory and written out in batches.
//!
//! A door logs one line per request. Written in place, each line was a system call on the
//! request's thread (10-19 µs of a 70-90 µs read, docs/benchmarks.md); handed to a writer
//! thread (tracing-appender), each line woke that thread, which cost as much. Here a line is
//! appended to a buffer under a lock, nothing is woken, and a flusher thread writes the
//! buffer every [`FLUSH_EVERY`] in one call; a buffer past [`MAX_PENDING_BYTES`] is written
//! by the thread that filled it, so memory stays bounded and no line is ever dropped. A
//! clean stop ([`LogGuard`] dropped) writes everything; a killed process loses at most the
//! lines of its last [`FLUSH_EVERY`].
//!
//! JSON lines are written by [`JsonLines`]: tracing-subscriber's own JSON shape, serialized
//! straight into a byte buffer (the library's formatter passes every piece through an
//! `io::Write`-to-`fmt::Write` adaptor that checks it is UTF-8, a fifth of a cached read's
//! instructions with the line itself). Its timestamp is the library's too (RFC 3339, UTC, to the
//! microsecond), with the date and time of day formatted once a second per thread
//! ([`Timestamp`]): the library formats every field of the date on every line.
//!
//! The door's one line per request ([`crate::TracingAudit`]) skips tracing's dispatch and
//! field visitor when JSON lines are the output: [`json_event`] writes the same bytes
//! [`JsonLines`] would, straight from the record's values, after the same `RUST_LOG` check.

use std::cell::RefCell;
use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::ser::{SerializeMap, Serializer};
use tracing::{Event, Level, Subscriber};
use tracing_serde::fields::AsMap;
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields, Writer};
use tracing_subscriber::registry::LookupSpan;

/// How long a line may wait in memory before it is written.
pub const FLUSH_EVERY: Duration = Duration::from_millis(25);

/// Bytes of lines held before the thread adding one writes them out itself.
pub const MAX_PENDING_BYTES: usize = 256 * 1024;

/// The lines not yet written and where they go.
struct Pending {
    lines: Vec<u8>,
    sink: Box<dyn Write + Send>,
}

impl Pending {
    /// Writes every held line to the sink, in order. A sink that fails (standard error
    /// closed) loses the lines: there is nowhere left to report it.
    fn write_out(&mut self) {
        if !self.lines.is_empty() {
            let _ = self.sink.write_all(&self.lines);
            let _ = self.sink.flush();
            self.lines.clear();
        }
    }
}

/// The shared buffer: a line is appended under the lock and the lock is released.
struct Shared {
    pending: Mutex<Pending>,
    stop: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        // A thread that panicked while appending left at worst a partial line: keep logging.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// tracing-subscriber's writer: every event's formatted line is one `write_all` to it.
#[derive(Clone)]
pub struct BatchedWriter {
    shared: Arc<Shared>,
}

impl BatchedWriter {
    /// Holds `buf` (whole lines) for the flusher; writes everything out itself when the
    /// buffer is full or logging is stopping.
    fn append(&self, buf: &[u8]) {
        let mut pending = self.shared.lock();
        pending.lines.extend_from_slice(buf);
        // Once the guard is gone (the process is ending: tasks still stopping may log), no
        // thread will write the buffer again, so a line goes out at once.
        if pending.lines.len() >= MAX_PENDING_BYTES || self.shared.stop.load(Ordering::Acquire) {
            pending.write_out();
        }
    }
}

impl Write for BatchedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.append(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for BatchedWriter {
    type Writer = BatchedWriter;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// Keeps the flusher thread; dropping it writes every line still held (kept by `main`).
#[must_use = "dropping the guard writes the held lines and stops batching"]
pub struct LogGuard {
    shared: Arc<Shared>,
    flusher: Option<JoinHandle<()>>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(flusher) = self.flusher.take() {
            flusher.thread().unpark();
            let _ = flusher.join();
        }
        self.shared.lock().write_out();
    }
}

/// A writer of lines to `sink`, written every `every` by a thread of its own (named
/// `log-writer`).
pub fn batched(sink: Box<dyn Write + Send>, every: Duration) -> (BatchedWriter, LogGuard) {
    let shared = Arc::new(Shared {
        pending: Mutex::new(Pending {
            lines: Vec::with_capacity(64 * 1024),
            sink,
        }),
        stop: AtomicBool::new(false),
    });
    let flusher = {
        let shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("log-writer".into())
            .spawn(move || {
                while !shared.stop.load(Ordering::Acquire) {
                    std::thread::park_timeout(every);
                    shared.lock().write_out();
                }
            })
    };
    let guard = LogGuard {
        shared: Arc::clone(&shared),
        // Without a thread (the system refused one) every line is written when the buffer
        // fills and when the guard drops: nothing is lost, lines only come later.
        flusher: flusher.ok(),
    };
    (BatchedWriter { shared }, guard)
}

/// One JSON object per event, exactly as tracing-subscriber's JSON format writes it with its
/// defaults (`timestamp`, `level`, `fields`, `target`), serialized into a reused byte buffer
/// and handed to the writer once. An event inside a span is left to the library's formatter,
/// which adds the span's fields (none of this workspace's code opens one).
pub struct JsonLines {
    inside_spans: format::Format<format::Json>,
}

impl Default for JsonLines {
    fn default() -> Self {
        Self {
            inside_spans: format::Format::default().json(),
        }
    }
}

/// A line's timestamp as tracing-subscriber writes it (`2026-12-07T03:11:00.850960Z`), its
/// date and time of day kept from the last line within the same second.
#[derive(Debug, Default)]
struct Timestamp {
    /// The second since the Unix epoch the first `date_and_time` bytes of `text` show
    /// (`None`: nothing formatted yet).
    second: Option<u64>,
    date_and_time: usize,
    text: String,
}

impl Timestamp {
    /// `at`, formatted; the date and time of day only when its second is not the last one's.
    fn of(&mut self, at: SystemTime) -> &str {
        let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
        let second = since.as_secs();
        if self.second != Some(second) {
            self.text.clear();
            let day_and_time = i64::try_from(second)
                .ok()
                .and_then(|s| jiff::Timestamp::from_second(s).ok())
                .unwrap_or(jiff::Timestamp::MAX);
            // Writing into a String cannot fail.
            let _ = fmt::Write::write_fmt(
                &mut self.text,
                format_args!("{}", day_and_time.strftime("%Y-%m-%dT%H:%M:%S")),
            );
            self.second = Some(second);
            self.date_and_time = self.text.len();
        }
        self.text.truncate(self.date_and_time);
        let micros = since.subsec_micros();
        let _ = fmt::Write::write_fmt(&mut self.text, format_args!(".{micros:06}Z"));
        &self.text
    }
}

/// When a line is written: the system clock, read as tracing-subscriber's formatter reads it
/// for the lines it writes. A log line's own time, not the products' (their [`crate::Clock`]).
#[allow(clippy::disallowed_methods)]
fn written_at() -> SystemTime {
    SystemTime::now()
}

thread_local! {
    /// The timestamp and the line being serialized, kept between events so that a line
    /// allocates nothing.
    static LINE: RefCell<(Timestamp, Vec<u8>)> =
        RefCell::new((Timestamp::default(), Vec::with_capacity(512)));
}

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'w> FormatFields<'w> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        if event.parent().is_some() || (event.is_contextual() && ctx.lookup_current().is_some()) {
            return self.inside_spans.format_event(ctx, writer, event);
        }
        let meta = event.metadata();
        LINE.with_borrow_mut(|(timestamp, line)| {
            line.clear();
            let mut json = serde_json::Serializer::new(&mut *line);
            let mut map = json.serialize_map(None).map_err(|_| fmt::Error)?;
            map.serialize_entry("timestamp", timestamp.of(written_at()))
                .and_then(|()| map.serialize_entry("level", meta.level().as_str()))
                .and_then(|()| map.serialize_entry("fields", &event.field_map()))
                .and_then(|()| map.serialize_entry("target", meta.target()))
                .and_then(|()| map.end())
                .map_err(|_| fmt::Error)?;
            line.push(b'\n');
            writer.write_str(std::str::from_utf8(line).map_err(|_| fmt::Error)?)
        })
    }
}

/// Where [`json_event`] writes: set by [`init_tracing`] when the output is JSON lines.
static JSON_OUT: OnceLock<BatchedWriter> = OnceLock::new();

/// A field's value in a line [`json_event`] writes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Field<'a> {
    Str(&'a str),
    U64(u64),
}

/// Writes one event's line straight to the JSON output, the bytes [`JsonLines`] writes for a
/// `tracing` event of `level` and `target` with `message` and then `fields` (the macro's
/// order), outside any span. Returns `false`, writing nothing, when the output is not JSON
/// lines or a span is current (the library's formatter adds span fields): the caller then
/// logs through `tracing`. The caller checks `RUST_LOG` first (`tracing::enabled!`).
pub(crate) fn json_event(
    level: Level,
    target: &str,
    message: &str,
    fields: &[(&'static str, Field<'_>)],
) -> bool {
    let Some(out) = JSON_OUT.get() else {
        return false;
    };
    if !tracing::Span::current().is_none() {
        return false;
    }
    LINE.with_borrow_mut(|(timestamp, line)| {
        line.clear();
        event_line(
            line,
            timestamp.of(written_at()),
            level,
            target,
            message,
            fields,
        );
        out.append(line);
    });
    true
}

/// `text` as a JSON string, escaped as `serde_json` escapes it (control characters, `"` and
/// `\\`); text with none of them, nearly every field of a line, is copied as it is after one
/// branch-free pass over its bytes.
fn push_json_string(line: &mut Vec<u8>, text: &str) {
    let special = text.bytes().fold(false, |seen, b| {
        seen | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if special {
        // Serializing a string into a `Vec` cannot fail.
        let _ = serde_json::to_writer(&mut *line, text);
    } else {
        line.reserve(text.len() + 2);
        line.push(b'"');
        line.extend_from_slice(text.as_bytes());
        line.push(b'"');
    }
}

/// One line in [`JsonLines`]' shape: `timestamp`, `level`, `fields` (the message first),
/// `target`. The message, the target and every string value are escaped as the library's
/// field visitor (`serde_json`) escapes them; the timestamp, the level and the field names
/// (identifiers, as a `tracing` macro's are) need no escaping and are copied.
fn event_line(
    line: &mut Vec<u8>,
    timestamp: &str,
    level: Level,
    target: &str,
    message: &str,
    fields: &[(&'static str, Field<'_>)],
) {
    line.extend_from_slice(b"{\"timestamp\":\"");
    line.extend_from_slice(timestamp.as_bytes());
    line.extend_from_slice(b"\",\"level\":\"");
    line.extend_from_slice(level.as_str().as_bytes());
    line.extend_from_slice(b"\",\"fields\":{\"message\":");
    push_json_string(line, message);
    for (name, value) in fields {
        line.extend_from_slice(b",\"");
        line.extend_from_slice(name.as_bytes());
        line.extend_from_slice(b"\":");
        match value {
            Field::Str(text) => push_json_string(line, text),
            Field::U64(n) => line.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
        }
    }
    line.extend_from_slice(b"},\"target\":");
    push_json_string(line, target);
    line.extend_from_slice(b"}\n");
}

/// Initializes logging on standard error, `RUST_LOG` filtering (default `info`): one JSON
/// object per line when `format` is `json`, tracing-subscriber's text lines otherwise;
/// written in batches (above).
pub fn init_tracing(format: &str) -> LogGuard {
    let (writer, guard) = batched(Box::new(io::stderr()), FLUSH_EVERY);
    let writer_for_events = writer.clone();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    if format == "json" {
        builder
            .fmt_fields(format::JsonFields::new())
            .event_format(JsonLines::default())
            .init();
        // `init` sets the process's one subscriber (it panics on a second): set once too.
        let _ = JSON_OUT.set(writer_for_events);
    } else {
        builder.init();
    }
    guard
}

/// Helpers for the tests of the crate's log lines.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// A sink the test reads back; each write is announced on `written`, if set.
    #[derive(Clone, Default)]
    pub(crate) struct Sink(
        pub(crate) Arc<Mutex<Vec<u8>>>,
        pub(crate) Option<std::sync::mpsc::Sender<()>>,
    );

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("sink").extend_from_slice(buf);
            if let Some(written) = &self.1 {
                let _ = written.send(());
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        pub(crate) fn text(&self) -> String {
            String::from_utf8(self.0.lock().expect("sink").clone()).expect("utf-8")
        }
    }

    /// The lines a subscriber filtered by `directives` (as `RUST_LOG`) writes while `emit`
    /// runs: [`JsonLines`] when `ours`, else the library's own JSON format.
    pub(crate) fn lines_of(ours: bool, directives: &str, emit: impl Fn()) -> String {
        let sink = Sink::default();
        let make = {
            let sink = sink.clone();
            move || sink.clone()
        };
        let builder = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(directives))
            .with_writer(make)
            .with_ansi(false);
        if ours {
            let subscriber = builder
                .fmt_fields(format::JsonFields::new())
                .event_format(JsonLines::default())
                .finish();
            tracing::subscriber::with_default(subscriber, emit);
        } else {
            tracing::subscriber::with_default(builder.json().finish(), emit);
        }
        sink.text()
    }

    /// The JSON lines [`init_tracing`]'s subscriber writes while `emit` runs (filter `info`).
    pub(crate) fn json_lines_of(emit: impl Fn()) -> String {
        lines_of(true, "info", emit)
    }

    /// The timestamp value at the head of a JSON line.
    pub(crate) fn timestamp_of(line: &str) -> &str {
        let start = "{\"timestamp\":\"".len();
        let end = line[start..].find('"').map_or(line.len(), |i| start + i);
        &line[start..end]
    }

    /// The line [`json_event`] writes for these values at `timestamp`.
    pub(crate) fn event_line_at(
        timestamp: &str,
        level: Level,
        target: &str,
        message: &str,
        fields: &[(&'static str, Field<'_>)],
    ) -> String {
        let mut line = Vec::new();
        event_line(&mut line, timestamp, level, target, message, fields);
        String::from_utf8_lossy(&line).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{Sink, lines_of};
    use super::*;

    #[test]
    fn lines_wait_in_memory_and_are_written_in_order_within_the_interval() {
        let (tx, written) = std::sync::mpsc::channel();
        let sink = Sink(Arc::default(), Some(tx));
        let (mut writer, _guard) = batched(Box::new(sink.clone()), Duration::from_millis(20));
        writer.write_all(b"one\n").expect("write");
        writer.write_all(b"two\n").expect("write");
        // Written by the flusher, with the guard still alive (in one write, or two if the
        // flusher ran between them).
        while sink.text() != "one\ntwo\n" {
            written
                .recv_timeout(Duration::from_secs(10))
                .expect("the lines were written within the interval");
        }
    }

    #[test]
    fn dropping_the_guard_writes_every_held_line() {
        let sink = Sink::default();
        // An interval no test waits for: only the guard can have written the lines.
        let (mut writer, guard) = batched(Box::new(sink.clone()), Duration::from_secs(3600));
        for i in 0..100 {
            writer
                .write_all(format!("line {i}\n").as_bytes())
                .expect("write");
        }
        drop(guard);
        let text = sink.text();
        assert_eq!(text.lines().count(), 100);
        assert!(text.starts_with("line 0\n") && text.ends_with("line 99\n"));
        // A line logged after the guard is gone (a task still stopping) is written at once.
        writer.write_all(b"late\n").expect("write");
        assert!(sink.text().ends_with("line 99\nlate\n"));
    }

    #[test]
    fn a_full_buffer_is_written_by_the_thread_that_filled_it() {
        let sink = Sink::default();
        let (mut writer, _guard) = batched(Box::new(sink.clone()), Duration::from_secs(3600));
        let line = vec![b'x'; 1023];
        let mut written = 0;
        // One line short of the bound: held. The line that reaches it: everything written.
        while written + 1024 < MAX_PENDING_BYTES {
            writer.write_all(&line).expect("write");
            writer.write_all(b"\n").expect("write");
            written += 1024;
        }
        assert_eq!(sink.text().len(), 0);
        writer.write_all(&vec![b'y'; 1024]).expect("write");
        assert_eq!(sink.text().len(), written + 1024);
    }

    #[test]
    fn lines_from_many_threads_are_never_interleaved_or_lost() {
        let sink = Sink::default();
        let (writer, guard) = batched(Box::new(sink.clone()), Duration::from_millis(1));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let mut w = writer.clone();
                std::thread::spawn(move || {
                    for i in 0..500 {
                        w.write_all(format!("thread {t} line {i}\n").as_bytes())
                            .expect("write");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        drop(guard);
        let text = sink.text();
        assert_eq!(text.lines().count(), 4000);
        assert!(
            text.lines()
                .all(|l| l.starts_with("thread ") && l.split(' ').count() == 4)
        );
    }

    /// The line without its timestamp's value (the two formatters ran at different instants).
    fn without_timestamp(line: &str) -> String {
        let value_end = line
            .find("\",\"level\"")
            .expect("a level after the timestamp");
        assert!(line.starts_with("{\"timestamp\":\""));
        assert_eq!(
            value_end,
            "{\"timestamp\":\"".len() + "2026-12-07T03:11:00.850960Z".len()
        );
        line[value_end..].to_owned()
    }

    #[test]
    fn timestamps_are_the_librarys_rfc_3339_to_the_microsecond() {
        let at = |nanos: u128| {
            UNIX_EPOCH + Duration::from_nanos(u64::try_from(nanos).expect("in range"))
        };
        let mut stamp = Timestamp::default();
        // 2026-12-07T03:11:00.850960Z, then later in the same second, then the next seconds
        // (a day, a month and a year boundary), then back to an earlier second.
        let cases = [
            (1_796_613_060_850_960_123, "2026-12-07T03:11:00.850960Z"),
            (1_796_613_060_999_999_999, "2026-12-07T03:11:00.999999Z"),
            (1_796_613_061_000_000_000, "2026-12-07T03:11:01.000000Z"),
            (1_798_761_599_000_001_000, "2026-12-31T23:59:59.000001Z"),
            (1_798_761_600_000_000_000, "2027-01-01T00:00:00.000000Z"),
            (951_782_400_123_456_000, "2000-02-29T00:00:00.123456Z"),
            (0, "1970-01-01T00:00:00.000000Z"),
        ];
        for (nanos, want) in cases {
            assert_eq!(stamp.of(at(nanos)), want);
        }
    }

    #[test]
    fn json_lines_are_byte_for_byte_the_librarys_json_format() {
        let emit = || {
            let id = uuid::Uuid::from_u128(0x1234);
            tracing::info!(
                request_id = %id,
                door = "/play/mcp",
                status = 200_u64,
                delta = -3_i64,
                ok = true,
                ratio = 0.25_f64,
                nan = f64::NAN,
                quoted = "a \"quote\", a back\\slash, a\nnewline, a tab\t, \u{1} and ż",
                debugged = ?Some("x"),
                "mcp request"
            );
            tracing::warn!(target: "some::target", error = %"boom", "text with {}", "arguments");
            tracing::error!(answer = 42_u64);
        };
        let (library, ours) = (lines_of(false, "info", emit), lines_of(true, "info", emit));
        assert_eq!(ours.lines().count(), 3);
        for (l, o) in library.lines().zip(ours.lines()) {
            assert_eq!(without_timestamp(o), without_timestamp(l));
        }
        assert!(ours.contains("\"level\":\"WARN\",\"fields\":{\"message\":\"text with arguments\",\"error\":\"boom\"},\"target\":\"some::target\""));
    }

    #[test]
    fn an_event_inside_a_span_keeps_the_librarys_span_fields() {
        let emit = || {
            let span = tracing::info_span!("outer", job = 7_u64);
            let _entered = span.enter();
            tracing::info!(step = 1_u64, "inside");
        };
        let (library, ours) = (lines_of(false, "info", emit), lines_of(true, "info", emit));
        assert!(
            ours.contains("\"span\":{\"job\":7,\"name\":\"outer\"}"),
            "{ours}"
        );
        assert_eq!(without_timestamp(&ours), without_timestamp(&library));
    }
}
