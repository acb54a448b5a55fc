//! The `paydesk` command (see `paydesk::cli`).

fn main() -> std::process::ExitCode {
    paydesk::cli::main()
}
