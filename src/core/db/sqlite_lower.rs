//! SQLite's own `lower()` folds only ASCII, so a search for "иван" would miss "Иван" there
//! while PostgreSQL (with a UTF-8 ctype) finds it. Every SQLite connection gets a `lower()`
//! that folds the way Rust's `str::to_lowercase` does, so one query means the same on both.

use std::ffi::c_int;

use sea_orm::sqlx::sqlite::SqliteConnection;
use sea_orm::sqlx::{self, Error};

use libsqlite3_sys as ffi;

/// Replaces the built-in `lower(text)` on `conn` (SQLite lets an application's function of
/// the same name and arity take a built-in's place).
pub async fn install(conn: &mut SqliteConnection) -> Result<(), Error> {
    let mut handle = conn.lock_handle().await?;
    // SAFETY: the handle is a live connection this task holds locked; the name is a
    // NUL-terminated string; no user data, so nothing to destroy.
    let rc = unsafe {
        ffi::sqlite3_create_function_v2(
            handle.as_raw_handle().as_ptr(),
            c"lower".as_ptr(),
            1,
            ffi::SQLITE_UTF8 | ffi::SQLITE_DETERMINISTIC | ffi::SQLITE_INNOCUOUS,
            std::ptr::null_mut(),
            Some(lower),
            None,
            None,
            None,
        )
    };
    match rc {
        ffi::SQLITE_OK => Ok(()),
        rc => Err(sqlx::Error::Configuration(format!("registering lower() failed with SQLite code {rc}").into())),
    }
}

/// `lower(x)`: NULL stays NULL, anything else is read as UTF-8 text and lowercased.
unsafe extern "C" fn lower(ctx: *mut ffi::sqlite3_context, n_arg: c_int, args: *mut *mut ffi::sqlite3_value) {
    // SAFETY (whole body): SQLite calls this with `n_arg` valid values in `args`; the text
    // pointer it returns holds `sqlite3_value_bytes` bytes until the value is touched again,
    // and SQLITE_TRANSIENT makes it copy the result before `lowered` is dropped.
    unsafe {
        if n_arg != 1 {
            return ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
        }
        let value = *args;
        if ffi::sqlite3_value_type(value) == ffi::SQLITE_NULL {
            return ffi::sqlite3_result_null(ctx);
        }
        let text = ffi::sqlite3_value_text(value);
        let len = usize::try_from(ffi::sqlite3_value_bytes(value)).unwrap_or(0);
        if text.is_null() {
            return ffi::sqlite3_result_error_nomem(ctx);
        }
        let lowered = String::from_utf8_lossy(std::slice::from_raw_parts(text, len)).to_lowercase();
        match c_int::try_from(lowered.len()) {
            Ok(len) => ffi::sqlite3_result_text(ctx, lowered.as_ptr().cast(), len, ffi::SQLITE_TRANSIENT()),
            Err(_) => ffi::sqlite3_result_error_toobig(ctx),
        }
    }
}
