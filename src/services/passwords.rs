//! Dashboard passwords: argon2id hashes, made and checked on two dedicated threads.

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng};

use crate::web::error::AppError;

/// A job for the password-hashing threads.
type Job = Box<dyn FnOnce() + Send>;

/// The password-hashing threads: two, fed from one queue, whatever the load. Each hash takes
/// about 19 MiB and tens of milliseconds of a core; more at once would only trade memory for
/// nothing. Two long-lived threads (rather than the runtime's blocking pool, which starts
/// threads as it needs them) also keep the allocator from holding a 19 MiB block in every
/// thread's arena.
fn hashers() -> Option<std::sync::MutexGuard<'static, std::sync::mpsc::Sender<Job>>> {
    static QUEUE: std::sync::OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<Job>>> = std::sync::OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (sender, receiver) = std::sync::mpsc::channel::<Job>();
        let receiver = std::sync::Arc::new(std::sync::Mutex::new(receiver));
        for i in 0..2 {
            let receiver = receiver.clone();
            let worker = move || loop {
                let job = receiver.lock().map(|r| r.recv());
                match job {
                    Ok(Ok(job)) => job(),
                    _ => return,
                }
            };
            std::thread::Builder::new().name(format!("argon2-{i}")).spawn(worker).expect("a hashing thread");
        }
        std::sync::Mutex::new(sender)
    });
    queue.lock().ok()
}

/// Runs `work` on a hashing thread; `None` if the threads are gone.
async fn on_hasher<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (done, result) = tokio::sync::oneshot::channel();
    hashers()?.send(Box::new(move || drop(done.send(work())))).ok()?;
    result.await.ok()
}

/// Hashes a password with argon2id (on a hashing thread: it takes tens of milliseconds).
pub async fn hash(password: String) -> Result<String, AppError> {
    on_hasher(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default().hash_password(password.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| e.to_string())
    })
    .await
    .ok_or_else(|| AppError::Internal("the password-hashing threads stopped".into()))?
    .map_err(AppError::Internal)
}

/// Whether `password` matches `hash` (also on a hashing thread).
pub async fn matches(password: String, hash: String) -> bool {
    on_hasher(move || {
        PasswordHash::new(&hash)
            .is_ok_and(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
    })
    .await
    .unwrap_or(false)
}

/// A hash that no password matches, checked when the e-mail is unknown so that a login
/// takes as long whether or not the address has an account.
pub async fn dummy_hash() -> String {
    static DUMMY: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    DUMMY.get_or_init(|| async { hash(crate::domain::ids::random_hex(16)).await.unwrap_or_default() }).await.clone()
}
