//! A statement as data: its SQL text and its bound arguments ([`Statement`], built with
//! [`sql`] and [`Statement::bind`]; [`Arg`], one argument). Nothing here runs: `db.rs` runs a
//! statement on a pool, a transaction or a held connection, `inplace.rs` reads with one on
//! the calling thread, and both read it from here.

use std::borrow::Cow;

use uuid::Uuid;

/// One bound argument. Uuids are bound as TEXT on both backends.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Int(Option<i64>),
    Text(Option<String>),
    Flag(Option<bool>),
    Float(Option<f64>),
    Bytes(Option<Vec<u8>>),
}

/// SQL text and its arguments, in `$1, $2, …` order.
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a statement does nothing until it is executed or fetched"]
pub struct Statement {
    pub(crate) text: Cow<'static, str>,
    pub(crate) args: Vec<Arg>,
}

/// A statement of `text` with no arguments yet: `sql("… $1").bind(x).execute(&db)`.
pub fn sql(text: impl Into<Cow<'static, str>>) -> Statement {
    Statement {
        text: text.into(),
        args: Vec::new(),
    }
}

impl Statement {
    /// Binds the next `$n`.
    pub fn bind(mut self, value: impl Into<Arg>) -> Self {
        self.args.push(value.into());
        self
    }

    /// The SQL text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The arguments, in `$n` order.
    pub(crate) fn args(&self) -> &[Arg] {
        &self.args
    }
}

impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Arg::Int(Some(v))
    }
}
impl From<Option<i64>> for Arg {
    fn from(v: Option<i64>) -> Self {
        Arg::Int(v)
    }
}
impl From<i32> for Arg {
    fn from(v: i32) -> Self {
        Arg::Int(Some(i64::from(v)))
    }
}
impl From<u32> for Arg {
    fn from(v: u32) -> Self {
        Arg::Int(Some(i64::from(v)))
    }
}
impl From<bool> for Arg {
    fn from(v: bool) -> Self {
        Arg::Flag(Some(v))
    }
}
impl From<Option<bool>> for Arg {
    fn from(v: Option<bool>) -> Self {
        Arg::Flag(v)
    }
}
impl From<f64> for Arg {
    fn from(v: f64) -> Self {
        Arg::Float(Some(v))
    }
}
impl From<Option<f64>> for Arg {
    fn from(v: Option<f64>) -> Self {
        Arg::Float(v)
    }
}
impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Text(Some(v))
    }
}
impl From<&String> for Arg {
    fn from(v: &String) -> Self {
        Arg::Text(Some(v.clone()))
    }
}
impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Text(Some(v.to_owned()))
    }
}
impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Self {
        Arg::Text(v)
    }
}
impl From<Option<&String>> for Arg {
    fn from(v: Option<&String>) -> Self {
        Arg::Text(v.cloned())
    }
}
impl From<Option<&str>> for Arg {
    fn from(v: Option<&str>) -> Self {
        Arg::Text(v.map(str::to_owned))
    }
}
impl From<Uuid> for Arg {
    fn from(v: Uuid) -> Self {
        Arg::Text(Some(v.to_string()))
    }
}
impl From<Option<Uuid>> for Arg {
    fn from(v: Option<Uuid>) -> Self {
        Arg::Text(v.map(|u| u.to_string()))
    }
}
impl From<Vec<u8>> for Arg {
    fn from(v: Vec<u8>) -> Self {
        Arg::Bytes(Some(v))
    }
}
impl From<&[u8]> for Arg {
    fn from(v: &[u8]) -> Self {
        Arg::Bytes(Some(v.to_vec()))
    }
}
impl From<Option<Vec<u8>>> for Arg {
    fn from(v: Option<Vec<u8>>) -> Self {
        Arg::Bytes(v)
    }
}
