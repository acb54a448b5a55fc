//! The `paydesk` command: serve, migrate, create a shop or a dashboard user. It lives in the
//! library, so the binary compiles nothing of its own.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::app;
use crate::config::{Config, ConfigArgs};
use chrono::Utc;
use clap::{Parser, Subcommand};
use serde_json::json;

/// A self-hostable payment-acceptance service.
#[derive(Parser)]
#[command(name = "paydesk", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    config: ConfigArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Apply pending migrations, then serve HTTP (the default).
    Serve,
    /// Apply pending migrations and exit (an SQLite database gets a snapshot first).
    Migrate {
        /// Change nothing: list the pending migrations and print the SQL each runs, rehearsed
        /// on this database in a transaction that is rolled back.
        #[arg(long)]
        dry_run: bool,
    },
    /// Take a snapshot of the database while it serves: a checked copy, its manifest and the
    /// key its secrets open with; prints where it went as JSON.
    Backup {
        /// The folder of snapshots (default PAYDESK_BACKUP_DIR).
        #[arg(long)]
        to: Option<PathBuf>,
        /// Write the key file here rather than inside the snapshot (default
        /// PAYDESK_BACKUP_KEY_DIR).
        #[arg(long)]
        key_to: Option<PathBuf>,
    },
    /// Restore a snapshot to the database of DATABASE_URL, which must not be in use: the
    /// snapshot and its key are checked first, and a database it replaces is set aside.
    Restore {
        /// The snapshot's folder (`paydesk-20261128T170000Z`).
        snapshot: PathBuf,
        /// The snapshot's key file, when it was kept apart.
        #[arg(long)]
        key: Option<PathBuf>,
    },
    /// Manage shops.
    Shop {
        #[command(subcommand)]
        command: ShopCommand,
    },
    /// Manage dashboard users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Check the audit trail.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// The books of a shop.
    Invoices {
        #[command(subcommand)]
        command: InvoicesCommand,
    },
    /// The figures of recurring revenue.
    Revenue {
        #[command(subcommand)]
        command: RevenueCommand,
    },
}

#[derive(Subcommand)]
enum RevenueCommand {
    /// Make a shop's MRR movements again from its subscriptions' events (after an upgrade
    /// brought them, or to check them: it gives the movements kept); prints how many as JSON.
    Rebuild {
        /// The shop.
        #[arg(long)]
        shop_id: i64,
    },
}

#[derive(Subcommand)]
enum InvoicesCommand {
    /// Issue the invoices of the shop's charges that took money and have none (made before an
    /// upgrade brought invoices, or before its seller details were complete), with the credit
    /// notes of their refunds; prints how many as JSON. Nothing is issued until asked.
    Issue {
        /// The shop.
        #[arg(long)]
        shop_id: i64,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Check that each shop's audit trail is whole and unchanged (every record hashes to its
    /// hash and follows the one before it); prints a line of JSON per shop and fails when one
    /// is broken.
    Verify {
        /// Only this shop.
        #[arg(long)]
        shop_id: Option<i64>,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Add a dashboard user to a shop; the password is read from the first line of stdin.
    Create {
        /// The shop the user belongs to.
        #[arg(long)]
        shop_id: i64,
        /// The user's e-mail address: the login name.
        #[arg(long)]
        email: String,
        /// What the user may do: owner, administrator, developer, support or analyst.
        #[arg(long, default_value = "owner")]
        role: String,
    },
    /// Turn off the two-step login of a user who lost both their device and their recovery
    /// codes (an owner of the shop can do it on the dashboard for anyone else).
    ResetTwoStep {
        /// The user's e-mail address.
        #[arg(long)]
        email: String,
    },
}

#[derive(Subcommand)]
enum ShopCommand {
    /// Create a shop and print its id and secret key (shown this once) as JSON.
    Create {
        /// The shop's name, shown on its pay pages.
        #[arg(long)]
        name: String,
        /// The shop's site: where customers return after paying when a product has no return_url.
        #[arg(long)]
        url: Option<String>,
    },
}

/// Runs the command line.
#[tokio::main]
pub async fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::from_args(&cli.config) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("paydesk: {e}");
            return ExitCode::from(2);
        }
    };
    match &cli.command {
        Some(Command::Migrate { dry_run: true }) => crate::external::telemetry::capture_statements(),
        _ => crate::external::telemetry::init_logs(config.log_format),
    }
    match run(cli.command.unwrap_or(Command::Serve), config).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("paydesk: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command, config: Config) -> Result<(), Box<dyn std::error::Error>> {
    match command {
        Command::Serve => app::serve(config).await,
        Command::Migrate { dry_run: false } => {
            let applied = app::migrate(&config).await?;
            tracing::info!(count = applied.len(), "migrations applied");
            Ok(())
        }
        Command::Migrate { dry_run: true } => {
            let db = crate::db::connect_logged(&config.database_url).await?;
            let rehearsed = async {
                let lock = crate::db::migration_lock(&db).await?;
                if let Some(line) = crate::db::schema::standing(&db).await?.newer() {
                    return Err(line.into());
                }
                let rehearsed = crate::db::schema::rehearse(&db, crate::external::telemetry::take_statements).await?;
                drop(lock);
                Ok::<_, Box<dyn std::error::Error>>(rehearsed)
            }
            .await;
            crate::db::close(db).await;
            let (standing, rehearsed) = rehearsed?;
            print!("{}", review(&standing, &rehearsed));
            Ok(())
        }
        Command::Backup { to, key_to } => backup(&config, to, key_to).await,
        Command::Restore { snapshot, key } => {
            let restored = crate::services::backup::restore(&config, &snapshot, key.as_deref(), Utc::now()).await?;
            println!("{restored}");
            Ok(())
        }
        Command::Shop { command: ShopCommand::Create { name, url } } => {
            let name = name.trim();
            if name.is_empty() || name.chars().count() > 255 {
                return Err("--name must be 1 to 255 characters".into());
            }
            // Kept as customers are sent there: `http:shop.example` is `http://shop.example/`.
            let url = match url.as_deref().map(crate::domain::product::normalise_url) {
                Some(None) => return Err("--url must be an absolute http:// or https:// URL".into()),
                normalised => normalised.flatten(),
            };
            let kek = &config.kek;
            let created = with_database(&config, |db| async move {
                // After opening the database: a missing key file of sealed secrets is refused
                // there, never made anew here.
                let vault = crate::external::vault::Vault::load(kek)?;
                Ok(crate::services::keys::create_shop(&db, &vault, name, url, Utc::now()).await?)
            })
            .await?;
            let out = json!({
                "shop_id": created.shop.id,
                "secret_key": created.secret_key,
                "name": created.shop.name,
            });
            println!("{out}");
            Ok(())
        }
        Command::Audit { command: AuditCommand::Verify { shop_id } } => {
            let checked =
                with_database(&config, |db| async move { Ok(crate::services::audit::verify_all(&db, shop_id).await?) })
                    .await?;
            for shop in &checked {
                println!("{}", json!(shop));
            }
            match checked.iter().filter(|c| c.broken.is_some()).count() {
                0 => Ok(()),
                n => Err(format!("the audit trail of {n} shop(s) is broken").into()),
            }
        }
        Command::Invoices { command: InvoicesCommand::Issue { shop_id } } => {
            let settings = config.clone();
            let issued = with_database(&config, |db| async move {
                if crate::db::shops::find(&db, shop_id).await?.is_none() {
                    return Err(format!("there is no shop {shop_id}").into());
                }
                Ok(crate::services::invoices::issue_missing(&db, &settings, shop_id, Utc::now()).await?)
            })
            .await?;
            tracing::info!(shop_id, issued, "invoices of earlier charges issued on the command line");
            println!("{}", json!({"shop_id": shop_id, "issued": issued}));
            Ok(())
        }
        Command::Revenue { command: RevenueCommand::Rebuild { shop_id } } => {
            let made = with_database(&config, |db| async move {
                if crate::db::shops::find(&db, shop_id).await?.is_none() {
                    return Err(format!("there is no shop {shop_id}").into());
                }
                Ok(crate::services::revenue::rebuild(&db, shop_id).await?)
            })
            .await?;
            tracing::info!(shop_id, made, "MRR movements made again from the events on the command line");
            println!("{}", json!({"shop_id": shop_id, "movements": made}));
            Ok(())
        }
        Command::User { command: UserCommand::ResetTwoStep { email } } => {
            let email = crate::domain::account::normalise_email(&email);
            let (user, reset) = with_database(&config, |db| async move {
                let Some(user) = crate::db::users::by_email(&db, &email).await? else {
                    return Err(format!("there is no user {email}").into());
                };
                let audit = operator(user.shop_id, "two_step.reset", "user reset-two-step");
                let reset = crate::db::two_step::disable(&db, &user.id, &audit, Utc::now()).await?;
                Ok((user, reset))
            })
            .await?;
            tracing::info!(shop_id = user.shop_id, reset, "two-step login of a user reset on the command line");
            println!(
                "{}",
                json!({"user_id": user.id, "shop_id": user.shop_id, "email": user.email, "two_step": "off", "was_on": reset})
            );
            Ok(())
        }
        Command::User { command: UserCommand::Create { shop_id, email, role } } => {
            let Some(role) = crate::domain::access::Role::parse(&role) else {
                return Err(format!("--role must be one of {}", crate::domain::access::Role::WORDS.join(", ")).into());
            };
            let mut password = String::new();
            std::io::stdin().read_line(&mut password)?;
            let body = json!({"email": email, "password": password.trim_end_matches(['\r', '\n']),
                              "password_confirmation": password.trim_end_matches(['\r', '\n'])});
            let body = body.as_object().cloned().unwrap_or_default();
            let r = crate::domain::input::Reader::new(&body);
            let mut errors = crate::domain::Errors::default();
            let email = crate::domain::account::email(&r, "email", &mut errors);
            let password = crate::domain::account::new_password(&r, "password", &mut errors);
            let (Some(email), Some(password)) = (email, password) else {
                return Err(errors.message().into());
            };
            let user = with_database(&config, |db| async move {
                if crate::db::shops::find(&db, shop_id).await?.is_none() {
                    return Err(format!("there is no shop {shop_id}").into());
                }
                let hash = crate::services::passwords::hash(password).await?;
                let audit = operator(shop_id, "user.created", "user create");
                Ok(crate::db::users::insert(&db, shop_id, &email, hash, role, &audit, Utc::now()).await?)
            })
            .await?;
            println!("{}", json!({"user_id": user.id, "shop_id": shop_id, "email": user.email, "role": user.role}));
            Ok(())
        }
    }
}

/// Runs `work` on the database, opened (and migrated), then closes it whatever `work`
/// answered: on SQLite the write-ahead log goes into the database file (see [`crate::db::close`]).
async fn with_database<T, Fut>(
    config: &Config,
    work: impl FnOnce(sea_orm::DatabaseConnection) -> Fut,
) -> Result<T, Box<dyn std::error::Error>>
where
    Fut: Future<Output = Result<T, Box<dyn std::error::Error>>>,
{
    let db = app::open_database(config).await?;
    let done = work(db.clone()).await;
    crate::db::close(db).await;
    done
}

/// `paydesk backup`: a manual snapshot, kept until the operator deletes it.
async fn backup(
    config: &Config,
    to: Option<PathBuf>,
    key_to: Option<PathBuf>,
) -> Result<(), Box<dyn std::error::Error>> {
    use crate::services::backup::{Options, take};
    let Some(dir) = to.or_else(|| config.backups.dir.clone()) else {
        return Err("say where the snapshot goes: --to DIR (or PAYDESK_BACKUP_DIR)".into());
    };
    if config.kek == crate::config::KekSource::Ephemeral {
        return Err("an in-memory database has nothing to back up".into());
    }
    if let Some(file) = crate::config::sqlite_file(&config.database_url)
        && !file.exists()
    {
        return Err(format!("there is no database at {}", file.display()).into());
    }
    let db = crate::db::connect(&config.database_url, 1).await?;
    if let Some(line) = crate::db::schema::standing(&db).await?.newer() {
        return Err(line.into());
    }
    let key = crate::external::vault::snapshot_key(&config.kek)?;
    let key_dir = key_to.or_else(|| config.backups.key_dir.clone());
    let options = Options::new(dir, key_dir, crate::domain::backup::Reason::Manual, &config.backups);
    let taken = take(&db, &config.database_url, &key, &options, Utc::now()).await;
    crate::db::close(db).await;
    let taken = taken?;
    let m = &taken.manifest;
    let out = json!({
        "snapshot": taken.path.display().to_string(),
        "key": taken.key.display().to_string(),
        "taken_at": m.taken_at,
        "schema": m.schema,
        "bytes": m.bytes,
        "sha256": m.sha256,
        "rows": m.tables.values().sum::<i64>(),
        "tables": m.tables,
    });
    println!("{out}");
    Ok(())
}

/// What `paydesk migrate --dry-run` prints: SQL, with what it is in comments.
fn review(standing: &crate::domain::schema::Standing, rehearsed: &[crate::db::schema::Rehearsed]) -> String {
    let at = standing.version.as_deref().unwrap_or("an empty database");
    let mut out = format!("-- paydesk {}: the database is at {at}", env!("CARGO_PKG_VERSION"));
    if rehearsed.is_empty() {
        out.push_str("; no migration is pending.\n");
        return out;
    }
    out.push_str(&format!(
        "; {} migration(s) pending.\n-- Rehearsed on this database in a transaction that was rolled back: nothing \
         was changed.\n",
        rehearsed.len()
    ));
    for migration in rehearsed {
        out.push_str(&format!("\n-- {} (ran in {} ms)\n", migration.name, migration.elapsed.as_millis()));
        for statement in &migration.statements {
            out.push_str(statement.trim_end_matches(';'));
            out.push_str(";\n");
        }
    }
    out
}

/// An entry of a shop's audit trail: `action` of the operator, by the command `command`.
fn operator(shop_id: i64, action: &str, command: &str) -> crate::domain::audit::Entry {
    use crate::domain::audit::{Actor, Entry, Origin};
    let origin = Origin { user_agent: Some(format!("paydesk {command}")), ..Origin::default() };
    Entry::new(shop_id, Actor::operator(), origin, action)
}
