//! CSV downloads: the dashboard's lists and the API's MRR per subscriber (RFC 4180): every field quoted when it must be, and a
//! cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, return at its start)
//! kept as text behind a `'`.

use axum::body::Body;
use axum::http::HeaderName;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt, TryStreamExt};

use crate::web::error::AppError;

/// A CSV document being written, header first.
pub struct Csv(String);

impl Csv {
    /// A document with these column names.
    pub fn new(columns: &[&str]) -> Csv {
        let mut csv = Csv(String::new());
        csv.row(columns);
        csv
    }

    /// A piece of a document: rows without the header.
    pub fn empty() -> Csv {
        Csv(String::new())
    }

    /// Adds one row.
    pub fn row(&mut self, cells: &[&str]) {
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                self.0.push(',');
            }
            let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number(cell);
            let quoted =
                cell.contains([',', '"', '\n', '\r']) || (!formula && cell.starts_with(' ')) || cell.ends_with(' ');
            if quoted {
                self.0.push('"');
            }
            if formula {
                self.0.push('\'');
            }
            for (j, part) in cell.split('"').enumerate() {
                if j > 0 {
                    self.0.push_str("\"\"");
                }
                self.0.push_str(part);
            }
            if quoted {
                self.0.push('"');
            }
        }
        self.0.push_str("\r\n");
    }

    /// The rows written so far, leaving none.
    pub fn take(&mut self) -> String {
        std::mem::take(&mut self.0)
    }
}

/// A download named `filename` sent as it is written: `header` at once, then each piece of
/// rows `rows` gives. A failure midway ends the connection without the body's end, so that
/// the browser reports the download failed rather than keeping a file that looks whole.
pub fn stream<S>(filename: &str, header: Csv, rows: S) -> Response
where
    S: Stream<Item = Result<String, AppError>> + Send + 'static,
{
    let rows = rows.map_err(|e| {
        tracing::error!(error = %e, "a CSV export failed midway");
        std::io::Error::other(e.to_string())
    });
    // Fused: a compressing layer polls the body once more after its end, which the pages'
    // stream must not be.
    let body = futures::stream::once(std::future::ready(Ok(header.0))).chain(rows).fuse();
    (headers(filename), Body::from_stream(body)).into_response()
}

/// A document's rows read a page at a time, the next page read while this one is written
/// and sent: `read(after)` reads the page that starts after the cursor `after` (`None`: the
/// first page) and says where the next one starts (`None`: there is none), in a task of its
/// own; `write` makes each page's rows as it is sent. The reading stops when the download
/// does.
pub fn pages<C, T, F, Fut, W>(mut read: F, write: W) -> impl Stream<Item = Result<String, AppError>> + Send + 'static
where
    C: Send + 'static,
    T: Send + 'static,
    F: FnMut(Option<C>) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(T, Option<C>), AppError>> + Send + 'static,
    W: FnMut(T) -> String + Send + 'static,
{
    let (sent, received) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        let mut after = None;
        loop {
            let (page, next) = match read(after.take()).await {
                Ok(read) => read,
                Err(e) => {
                    let _ = sent.send(Err(e)).await;
                    return;
                }
            };
            // Nobody to send it to: the download ended.
            if sent.send(Ok(page)).await.is_err() {
                return;
            }
            match next {
                Some(next) => after = Some(next),
                None => return,
            }
        }
    });
    futures::stream::unfold(received, |mut received| async move { received.recv().await.map(|page| (page, received)) })
        .map_ok(write)
}

fn headers(filename: &str) -> [(HeaderName, String); 3] {
    [
        (CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
        (CONTENT_DISPOSITION, format!("attachment; filename=\"{filename}\"")),
        (CACHE_CONTROL, "no-store".to_string()),
    ]
}

/// `-9.90`: a negative amount is a number, not a formula.
fn is_number(cell: &str) -> bool {
    cell.strip_prefix('-').is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_and_formulas_kept_as_text() {
        let mut csv = Csv::new(&["a", "b"]);
        csv.row(&["Mug, large", "say \"hi\""]);
        csv.row(&["=HYPERLINK(\"x\")", "-9.90"]);
        csv.row(&["line\nbreak", "@SUM(A1)"]);
        assert_eq!(
            csv.0,
            "a,b\r\n\"Mug, large\",\"say \"\"hi\"\"\"\r\n\"'=HYPERLINK(\"\"x\"\")\",-9.90\r\n\"line\nbreak\",'@SUM(A1)\r\n"
        );
    }
}
