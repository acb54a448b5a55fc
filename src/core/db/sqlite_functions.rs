//! What paydesk adds to every SQLite connection: its busy handler (see [`busy`]) and these
//! functions:
//! - `lower(text)`: SQLite's own folds only ASCII, so a search for "иван" would miss "Иван"
//!   there while PostgreSQL (with a UTF-8 ctype) finds it. This one folds the way Rust's
//!   `str::to_lowercase` does, so one query means the same on both.
//! - `audit_hash(prev_hash, before, seq, after)`: the hash of an audit record chained after
//!   `prev_hash` as number `seq` (see `db::audit::record`).

use std::ffi::c_int;

use sea_orm::sqlx::sqlite::SqliteConnection;
use sea_orm::sqlx::{self, Error};

use libsqlite3_sys as ffi;

use crate::domain::audit::link_hash;

/// Adds the functions to `conn` (SQLite lets an application's function of the same name and
/// arity take a built-in's place).
pub async fn install(conn: &mut SqliteConnection) -> Result<(), Error> {
    let mut handle = conn.lock_handle().await?;
    let functions: [(&std::ffi::CStr, c_int, Function); 2] = [(c"lower", 1, lower), (c"audit_hash", 4, audit_hash)];
    for (name, arity, function) in functions {
        // SAFETY: the handle is a live connection this task holds locked; the name is a
        // NUL-terminated string; no user data, so nothing to destroy.
        let rc = unsafe {
            ffi::sqlite3_create_function_v2(
                handle.as_raw_handle().as_ptr(),
                name.as_ptr(),
                arity,
                ffi::SQLITE_UTF8 | ffi::SQLITE_DETERMINISTIC | ffi::SQLITE_INNOCUOUS,
                std::ptr::null_mut(),
                Some(function),
                None,
                None,
                None,
            )
        };
        if rc != ffi::SQLITE_OK {
            let message = format!("registering {name:?} failed with SQLite code {rc}");
            return Err(sqlx::Error::Configuration(message.into()));
        }
    }
    // SAFETY: as above; the handler keeps no data.
    let rc = unsafe { ffi::sqlite3_busy_handler(handle.as_raw_handle().as_ptr(), Some(busy), std::ptr::null_mut()) };
    if rc != ffi::SQLITE_OK {
        return Err(sqlx::Error::Configuration(
            format!("setting the busy handler failed with SQLite code {rc}").into(),
        ));
    }
    Ok(())
}

/// How long a statement waits for another connection's write lock, as the pool's busy
/// timeout said before this handler took its place.
const BUSY_FOR: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits for the write lock another connection holds: SQLite's own handler sleeps 1, 2, 5,
/// 10, … up to 100 ms between looks, so a write that finds the lock taken twice waits 3 ms
/// and four times 18 ms, however soon the lock was free. A write transaction of this process
/// takes its turn first (`db::txn`) and finds the lock free; the writes that do not (a single
/// statement on the pool, another process, the command line) look again every 100 µs for the
/// first 10 ms, then every millisecond, until [`BUSY_FOR`] has passed.
unsafe extern "C" fn busy(_: *mut std::ffi::c_void, tries: c_int) -> c_int {
    const QUICK: c_int = 100;
    let (quick, slow) = (std::time::Duration::from_micros(100), std::time::Duration::from_millis(1));
    let waited = quick * tries.min(QUICK) as u32 + slow * (tries - QUICK).max(0) as u32;
    if waited >= BUSY_FOR {
        return 0;
    }
    std::thread::sleep(if tries < QUICK { quick } else { slow });
    1
}

type Function = unsafe extern "C" fn(*mut ffi::sqlite3_context, c_int, *mut *mut ffi::sqlite3_value);

/// The text of `value` (`None` for NULL), read as UTF-8; `Err` if SQLite could not make it
/// (out of memory).
///
/// # Safety
/// `value` is a value SQLite passed to a function now running; the text is copied before it
/// is touched again.
unsafe fn text(value: *mut ffi::sqlite3_value) -> Result<Option<String>, ()> {
    // SAFETY: as the caller promises; the pointer holds `sqlite3_value_bytes` bytes.
    unsafe {
        if ffi::sqlite3_value_type(value) == ffi::SQLITE_NULL {
            return Ok(None);
        }
        let text = ffi::sqlite3_value_text(value);
        let len = usize::try_from(ffi::sqlite3_value_bytes(value)).unwrap_or(0);
        if text.is_null() {
            return Err(());
        }
        Ok(Some(String::from_utf8_lossy(std::slice::from_raw_parts(text, len)).into_owned()))
    }
}

/// Sets `text` as the function's result (SQLITE_TRANSIENT: SQLite copies it).
///
/// # Safety
/// `ctx` is the context of a function now running.
unsafe fn result_text(ctx: *mut ffi::sqlite3_context, text: &str) {
    // SAFETY: as the caller promises.
    unsafe {
        match c_int::try_from(text.len()) {
            Ok(len) => ffi::sqlite3_result_text(ctx, text.as_ptr().cast(), len, ffi::SQLITE_TRANSIENT()),
            Err(_) => ffi::sqlite3_result_error_toobig(ctx),
        }
    }
}

/// `audit_hash(prev_hash, before, seq, after)`: [`link_hash`] of them; NULL if any is NULL.
unsafe extern "C" fn audit_hash(ctx: *mut ffi::sqlite3_context, n_arg: c_int, args: *mut *mut ffi::sqlite3_value) {
    // SAFETY (whole body): SQLite calls this with `n_arg` valid values in `args`.
    unsafe {
        if n_arg != 4 {
            return ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
        }
        let args = std::slice::from_raw_parts(args, 4);
        let seq = (ffi::sqlite3_value_type(args[2]) == ffi::SQLITE_INTEGER).then(|| ffi::sqlite3_value_int64(args[2]));
        match (text(args[0]), text(args[1]), seq, text(args[3])) {
            (Ok(Some(prev)), Ok(Some(before)), Some(seq), Ok(Some(after))) => {
                result_text(ctx, &link_hash(&prev, &before, seq, &after))
            }
            (Err(()), ..) | (_, Err(()), ..) | (.., Err(())) => ffi::sqlite3_result_error_nomem(ctx),
            _ => ffi::sqlite3_result_null(ctx),
        }
    }
}

/// `lower(x)`: NULL stays NULL, anything else is read as UTF-8 text and lowercased.
unsafe extern "C" fn lower(ctx: *mut ffi::sqlite3_context, n_arg: c_int, args: *mut *mut ffi::sqlite3_value) {
    // SAFETY (whole body): SQLite calls this with `n_arg` valid values in `args`.
    unsafe {
        if n_arg != 1 {
            return ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
        }
        match text(*args) {
            Ok(Some(text)) => result_text(ctx, &text.to_lowercase()),
            Ok(None) => ffi::sqlite3_result_null(ctx),
            Err(()) => ffi::sqlite3_result_error_nomem(ctx),
        }
    }
}
