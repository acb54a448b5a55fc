//! The `paydesk` command: serve, migrate, create a shop or a dashboard user. It lives in the
//! library, so the binary compiles nothing of its own.

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
    /// Apply pending migrations and exit.
    Migrate,
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
    crate::external::telemetry::init_logs(config.log_format);
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
        Command::Migrate => {
            app::open_database(&config).await?;
            tracing::info!("migrations applied");
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
            let db = app::open_database(&config).await?;
            let vault = crate::external::vault::Vault::load(&config.kek)?;
            let created = crate::services::keys::create_shop(&db, &vault, name, url, Utc::now()).await?;
            let out = json!({
                "shop_id": created.shop.id,
                "secret_key": created.secret_key,
                "name": created.shop.name,
            });
            println!("{out}");
            Ok(())
        }
        Command::Audit { command: AuditCommand::Verify { shop_id } } => {
            let db = app::open_database(&config).await?;
            let checked = crate::services::audit::verify_all(&db, shop_id).await?;
            for shop in &checked {
                println!("{}", json!(shop));
            }
            match checked.iter().filter(|c| c.broken.is_some()).count() {
                0 => Ok(()),
                n => Err(format!("the audit trail of {n} shop(s) is broken").into()),
            }
        }
        Command::User { command: UserCommand::ResetTwoStep { email } } => {
            let db = app::open_database(&config).await?;
            let email = crate::domain::account::normalise_email(&email);
            let Some(user) = crate::db::users::by_email(&db, &email).await? else {
                return Err(format!("there is no user {email}").into());
            };
            let audit = operator(user.shop_id, "two_step.reset", "user reset-two-step");
            let reset = crate::db::two_step::disable(&db, &user.id, &audit, Utc::now()).await?;
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
            let db = app::open_database(&config).await?;
            if crate::db::shops::find(&db, shop_id).await?.is_none() {
                return Err(format!("there is no shop {shop_id}").into());
            }
            let hash = crate::services::passwords::hash(password).await?;
            let audit = operator(shop_id, "user.created", "user create");
            let user = crate::db::users::insert(&db, shop_id, &email, hash, role, &audit, Utc::now()).await?;
            println!("{}", json!({"user_id": user.id, "shop_id": shop_id, "email": user.email, "role": user.role}));
            Ok(())
        }
    }
}

/// An entry of a shop's audit trail: `action` of the operator, by the command `command`.
fn operator(shop_id: i64, action: &str, command: &str) -> crate::domain::audit::Entry {
    use crate::domain::audit::{Actor, Entry, Origin};
    let origin = Origin { user_agent: Some(format!("paydesk {command}")), ..Origin::default() };
    Entry::new(shop_id, Actor::operator(), origin, action)
}
