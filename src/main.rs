//! The `paydesk` command (see `paydesk::app::cli`).

/// mimalloc instead of the C library's allocator: rows read on a database connection's thread
/// and freed on the request's, many small strings per request, and a third more lists of 100
/// a second on PostgreSQL (`cargo bench --bench http`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    paydesk::app::cli::main()
}
