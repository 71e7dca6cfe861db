//! Multi-row statements for the ingest: one `INSERT … VALUES (…), (…)` (or `UPDATE … FROM
//! (VALUES …)`) per table per log instead of one statement per row, and `IN (…)` reads of many
//! keys. A batch is cut into power-of-two pieces of at most [`MAX_ROWS`] rows, so each
//! statement has at most eight texts whatever the batch's size, and each stays prepared
//! once per connection (sqlx caches statements by text).
//!
//! Placeholders are numbered (`$1`, `$2`, …) on PostgreSQL and anonymous (`?`, bound in
//! order) on SQLite: SQLite looks a named parameter up by a linear scan of the statement's
//! parameter list, and sqlx asks for every parameter's name when it binds, so a numbered
//! 1,664-parameter statement cost a quadratic ~1.4 M steps to bind (11% of a fill's CPU).

use sqlkit::{Arg, Backend, Row, Tx, sql};

use super::sql_store::StoreError;

/// Rows per multi-row statement at most (8 columns × 128 rows stays far below either
/// backend's limit on bound parameters).
pub(super) const MAX_ROWS: usize = 128;

/// The largest power of two that is at most `n` and [`MAX_ROWS`] (0 for 0).
fn piece(n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    let capped = n.min(MAX_ROWS);
    1 << (usize::BITS - 1 - capped.leading_zeros())
}

/// The `n`th (from 1) bind placeholder of a statement on `backend`.
fn mark(backend: Backend, n: usize) -> String {
    match backend {
        Backend::Postgres => format!("${n}"),
        Backend::Sqlite => "?".to_owned(),
    }
}

/// `{head}($1, …, $width), ($width+1, …), …{tail}` for `rows` rows (`?` marks on SQLite).
fn values_text(backend: Backend, head: &str, width: usize, rows: usize, tail: &str) -> String {
    let mut text = String::with_capacity(head.len() + tail.len() + rows * width * 5);
    text.push_str(head);
    for r in 0..rows {
        if r > 0 {
            text.push_str(", ");
        }
        text.push('(');
        for c in 0..width {
            if c > 0 {
                text.push_str(", ");
            }
            text.push_str(&mark(backend, r * width + c + 1));
        }
        text.push(')');
    }
    text.push_str(tail);
    text
}

/// Runs `{head} VALUES-rows {tail}` over `rows` in pieces, each row bound by `bind` (which
/// returns exactly `width` arguments), and returns every row the pieces return (their
/// `RETURNING`, if any).
pub(super) async fn values<T>(
    tx: &mut Tx,
    head: &str,
    width: usize,
    tail: &str,
    rows: &[T],
    bind: impl Fn(&T) -> Vec<Arg>,
) -> Result<Vec<Row>, StoreError> {
    let mut out = Vec::new();
    let mut rest = rows;
    while !rest.is_empty() {
        let (now, later) = rest.split_at(piece(rest.len()));
        let mut statement = sql(values_text(tx.backend(), head, width, now.len(), tail));
        for row in now {
            let args = bind(row);
            debug_assert_eq!(args.len(), width, "{head}");
            for arg in args {
                statement = statement.bind(arg);
            }
        }
        out.extend(statement.fetch_all(&mut *tx).await?);
        rest = later;
    }
    Ok(out)
}

/// Runs `{head}$1, $2, …{tail}` over `keys` in pieces (an `IN (…)` list) and returns every
/// row read.
pub(super) async fn keyed(
    tx: &mut Tx,
    head: &str,
    tail: &str,
    keys: &[&str],
) -> Result<Vec<Row>, StoreError> {
    let mut out = Vec::new();
    let mut rest = keys;
    while !rest.is_empty() {
        let (now, later) = rest.split_at(piece(rest.len()));
        let backend = tx.backend();
        let marks = (1..=now.len())
            .map(|i| mark(backend, i))
            .collect::<Vec<_>>()
            .join(", ");
        let mut statement = sql(format!("{head}{marks}{tail}"));
        for key in now {
            statement = statement.bind(*key);
        }
        out.extend(statement.fetch_all(&mut *tx).await?);
        rest = later;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_are_powers_of_two_up_to_the_cap() {
        assert_eq!(piece(0), 0);
        assert_eq!(piece(1), 1);
        assert_eq!(piece(3), 2);
        assert_eq!(piece(127), 64);
        assert_eq!(piece(128), 128);
        assert_eq!(piece(129), 128);
        assert_eq!(piece(10_000), MAX_ROWS);
        let mut n = 250;
        let mut cuts = Vec::new();
        while n > 0 {
            cuts.push(piece(n));
            n -= piece(n);
        }
        assert_eq!(cuts, vec![128, 64, 32, 16, 8, 2]);
    }

    #[test]
    fn values_number_rows_then_columns() {
        assert_eq!(
            values_text(
                Backend::Postgres,
                "INSERT INTO t (a, b) VALUES ",
                2,
                2,
                " ON CONFLICT DO NOTHING"
            ),
            "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4) ON CONFLICT DO NOTHING"
        );
        assert_eq!(
            values_text(Backend::Postgres, "X ", 3, 1, ""),
            "X ($1, $2, $3)"
        );
        assert_eq!(
            values_text(Backend::Sqlite, "X ", 2, 2, ""),
            "X (?, ?), (?, ?)"
        );
    }
}
