//! Typed column access by name, for the rows of both backends. Which columns a row has and
//! what record they make stay with each product's row decoders.

use sqlx::{ColumnIndex, Decode, Row, Type};
use uuid::Uuid;

use crate::DbFailure;

/// Typed column access by name. A missing column or a value of the wrong type is `Internal`:
/// the schema and the code disagree. Uuids are stored as TEXT on both backends.
pub trait Cols {
    /// A non-null TEXT column.
    fn text(&self, col: &str) -> Result<String, DbFailure>;
    /// A nullable TEXT column.
    fn opt_text(&self, col: &str) -> Result<Option<String>, DbFailure>;
    /// A non-null integer column (BIGINT on PostgreSQL).
    fn int(&self, col: &str) -> Result<i64, DbFailure>;
    /// A nullable integer column.
    fn opt_int(&self, col: &str) -> Result<Option<i64>, DbFailure>;
    /// A non-null boolean column.
    fn flag(&self, col: &str) -> Result<bool, DbFailure>;
    /// A non-null floating-point column (DOUBLE PRECISION on PostgreSQL, REAL on SQLite).
    fn float(&self, col: &str) -> Result<f64, DbFailure>;
    /// A nullable floating-point column.
    fn opt_float(&self, col: &str) -> Result<Option<f64>, DbFailure>;
    /// A non-null binary column (BYTEA on PostgreSQL, BLOB on SQLite).
    fn bytes(&self, col: &str) -> Result<Vec<u8>, DbFailure>;
    /// A nullable binary column.
    fn opt_bytes(&self, col: &str) -> Result<Option<Vec<u8>>, DbFailure>;

    /// A non-null uuid stored as TEXT, parsed from the row's own text (no `String` copied out
    /// first).
    fn uuid(&self, col: &str) -> Result<Uuid, DbFailure>;
    /// A nullable uuid stored as TEXT.
    fn opt_uuid(&self, col: &str) -> Result<Option<Uuid>, DbFailure>;
}

impl<R> Cols for R
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> &'r str: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> bool: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> f64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Vec<u8>: Decode<'r, R::Database> + Type<R::Database>,
{
    fn text(&self, col: &str) -> Result<String, DbFailure> {
        Ok(self.try_get(col)?)
    }
    fn opt_text(&self, col: &str) -> Result<Option<String>, DbFailure> {
        Ok(self.try_get(col)?)
    }
    fn int(&self, col: &str) -> Result<i64, DbFailure> {
        Ok(self.try_get(col)?)
    }
    fn opt_int(&self, col: &str) -> Result<Option<i64>, DbFailure> {
        Ok(self.try_get(col)?)
    }
    fn flag(&self, col: &str) -> Result<bool, DbFailure> {
        Ok(self.try_get(col)?)
    }
    fn float(&self, col: &str) -> Result<f64, DbFailure> {
        Ok(self.try_get(col)?)
    }
    fn opt_float(&self, col: &str) -> Result<Option<f64>, DbFailure> {
        Ok(self.try_get(col)?)
    }
    fn bytes(&self, col: &str) -> Result<Vec<u8>, DbFailure> {
        Ok(self.try_get(col)?)
    }
    fn opt_bytes(&self, col: &str) -> Result<Option<Vec<u8>>, DbFailure> {
        Ok(self.try_get(col)?)
    }
    fn uuid(&self, col: &str) -> Result<Uuid, DbFailure> {
        parse_uuid(self.try_get::<&str, _>(col)?)
    }
    fn opt_uuid(&self, col: &str) -> Result<Option<Uuid>, DbFailure> {
        self.try_get::<Option<&str>, _>(col)?
            .map(parse_uuid)
            .transpose()
    }
}

pub(crate) fn parse_uuid(text: &str) -> Result<Uuid, DbFailure> {
    Uuid::parse_str(text).map_err(|e| DbFailure::Internal(format!("stored uuid {text:?}: {e}")))
}

#[cfg(test)]
mod tests {

    use sqlx::sqlite::SqliteRow;

    use super::*;
    use crate::{PoolSettings, open_sqlite};

    const ID: &str = "6f1c1f0e-3b59-4c8e-9a55-0d7a2b9f4e11";

    async fn row(select: &str) -> SqliteRow {
        let settings = PoolSettings::for_tests();
        let pool = open_sqlite("sqlite::memory:", &settings).await.unwrap();
        sqlx::query(select).fetch_one(&pool).await.unwrap()
    }

    #[tokio::test]
    async fn reads_each_type_by_name() {
        let r = row(&format!(
            "SELECT 'hi' AS t, NULL AS n, 42 AS i, 1 AS f, 0 AS g, '{ID}' AS u"
        ))
        .await;
        assert_eq!(r.text("t").unwrap(), "hi");
        assert_eq!(r.opt_text("t").unwrap().as_deref(), Some("hi"));
        assert_eq!(r.opt_text("n").unwrap(), None);
        assert_eq!(r.int("i").unwrap(), 42);
        assert_eq!(r.opt_int("i").unwrap(), Some(42));
        assert_eq!(r.opt_int("n").unwrap(), None);
        assert!(r.flag("f").unwrap());
        assert!(!r.flag("g").unwrap());
        assert_eq!(r.uuid("u").unwrap().to_string(), ID);
        assert_eq!(
            r.opt_uuid("u").unwrap().map(|u| u.to_string()).as_deref(),
            Some(ID)
        );
        assert_eq!(r.opt_uuid("n").unwrap(), None);
    }

    #[tokio::test]
    async fn a_schema_mismatch_is_internal() {
        let r = row("SELECT 'not-a-uuid' AS u, NULL AS n").await;
        for failure in [
            r.uuid("u").unwrap_err(),
            r.opt_uuid("u").unwrap_err(),
            r.int("u").unwrap_err(),
            r.text("absent").unwrap_err(),
        ] {
            assert!(matches!(failure, DbFailure::Internal(_)), "{failure:?}");
        }
        match r.uuid("u").unwrap_err() {
            DbFailure::Internal(message) => assert!(message.contains("not-a-uuid"), "{message}"),
            other => panic!("expected Internal, got {other:?}"),
        }
    }
}
