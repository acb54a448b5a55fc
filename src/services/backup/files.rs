//! The files of snapshots: checksums, durable writes and renames, and whether another
//! process has an SQLite database open.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sha2::{Digest, Sha256};

use super::Problem;

/// An I/O failure on `path`, said in one line.
pub fn io(path: &Path, doing: &str) -> impl FnOnce(std::io::Error) -> Problem {
    let shown = path.display().to_string();
    let doing = doing.to_string();
    move |e| Problem(format!("cannot {doing} {shown}: {e}"))
}

/// SHA-256 (hex) and size of the file at `path`.
pub fn sha256(path: &Path) -> Result<(String, u64), Problem> {
    let mut file = std::fs::File::open(path).map_err(io(path, "read"))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(io(path, "read"))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        bytes += n as u64;
    }
    Ok((crate::domain::ids::hex(&hasher.finalize()), bytes))
}

/// Makes what was written to `path` (a file or a folder's entries) durable.
pub fn sync(path: &Path) -> Result<(), Problem> {
    std::fs::File::open(path).and_then(|f| f.sync_all()).map_err(io(path, "sync"))
}

/// Makes the file at `path` readable by its owner only, and what was written to it durable.
pub fn private(path: &Path) -> Result<(), Problem> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io(path, "restrict"))?;
    }
    sync(path)
}

/// Writes `bytes` to a new file `path` (readable by its owner only) durably.
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<(), Problem> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(io(path, "create"))?;
    file.write_all(bytes).and_then(|()| file.sync_all()).map_err(io(path, "write"))
}

/// Creates the folder `dir` (and its parents), readable by the owner only when new.
pub fn make_dir(dir: &Path) -> Result<(), Problem> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(io(dir, "create the folder"))
}

/// Renames `from` to `to` and makes the rename durable.
pub fn rename(from: &Path, to: &Path) -> Result<(), Problem> {
    std::fs::rename(from, to).map_err(io(to, "rename into"))?;
    sync(to.parent().unwrap_or(Path::new(".")))
}

/// `path` with `suffix` added to its file name (`paydesk.db` + `-wal`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Whether another process has the SQLite database at `path` open: in WAL mode every
/// connection holds a lock on the `-shm` file for as long as it is open, and a connection in
/// the middle of a transaction one on the database file.
#[cfg(unix)]
pub fn sqlite_in_use(path: &Path) -> Result<bool, Problem> {
    use std::os::fd::AsRawFd;
    for file in [with_suffix(path, "-shm"), path.to_path_buf()] {
        let opened = match std::fs::File::open(&file) {
            Ok(opened) => opened,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(&file, "open")(e)),
        };
        // SAFETY: a plain `flock` record that F_GETLK fills in, on a descriptor we hold.
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = libc::F_WRLCK as _;
        lock.l_whence = libc::SEEK_SET as _;
        let asked = unsafe { libc::fcntl(opened.as_raw_fd(), libc::F_GETLK, &mut lock) };
        if asked == -1 {
            return Err(io(&file, "ask for the locks of")(std::io::Error::last_os_error()));
        }
        if i32::from(lock.l_type) != libc::F_UNLCK {
            return Ok(true);
        }
    }
    Ok(false)
}

/// All that `pipe` gives until it closes.
fn read_all(pipe: Option<&mut impl std::io::Read>) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Some(pipe) = pipe {
        pipe.read_to_end(&mut bytes).ok();
    }
    bytes
}

/// Holds the folder `dir` (a lock the system lets go when the process ends, however it
/// ends) until the answer is dropped.
pub fn hold(dir: &Path) -> Result<std::fs::File, Problem> {
    let file = std::fs::File::open(dir).map_err(io(dir, "open"))?;
    file.try_lock().map_err(|e| Problem(format!("cannot lock {}: {e}", dir.display())))?;
    Ok(file)
}

/// Whether something holds the folder `dir` (see [`hold`]); a folder that cannot be asked is
/// taken as held.
pub fn held(dir: &Path) -> bool {
    let Ok(file) = std::fs::File::open(dir) else { return true };
    file.try_lock().is_err()
}

/// Elsewhere the check cannot be made: the operator is trusted to have stopped paydesk.
#[cfg(not(unix))]
pub fn sqlite_in_use(_path: &Path) -> Result<bool, Problem> {
    Ok(false)
}

/// Runs a program to its end, killed at `deadline` if one is given; its standard error on
/// failure, in the problem.
pub async fn run(program: &str, args: Vec<String>, deadline: Option<Instant>) -> Result<String, Problem> {
    let name = program.to_string();
    let ran = tokio::task::spawn_blocking(move || {
        let mut command = std::process::Command::new(&name);
        // Dies with paydesk: a killed snapshot leaves no dump writing into its folder.
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe, and nothing else runs between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, || {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = command
            .args(&args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        // Its output is read beside it, so that a full pipe never stops it.
        let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
        let read_out = std::thread::spawn(move || read_all(out.as_mut()));
        let read_err = std::thread::spawn(move || read_all(err.as_mut()));
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                child.kill().ok();
                break child.wait()?;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let joined = |t: std::thread::JoinHandle<Vec<u8>>| t.join().unwrap_or_default();
        Ok::<_, std::io::Error>(std::process::Output { status, stdout: joined(read_out), stderr: joined(read_err) })
    })
    .await
    .map_err(|e| Problem(format!("{program} did not finish: {e}")))?;
    let output = match ran {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Problem(format!(
                "{program} is not installed: install PostgreSQL's client tools of the server's version or newer \
                 (Debian: apt-get install postgresql-client)"
            )));
        }
        Err(e) => return Err(Problem(format!("cannot run {program}: {e}"))),
    };
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        let said = said.trim().replace('\n', "; ");
        return Err(Problem(format!("{program} failed ({}): {said}", output.status)));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
