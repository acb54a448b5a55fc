//! The `paydesk` command: serve, migrate, or create a shop.

use std::process::ExitCode;

use chrono::Utc;
use clap::{Parser, Subcommand};
use paydesk::app;
use paydesk::config::{Config, ConfigArgs};
use serde_json::json;
use tracing_subscriber::EnvFilter;

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

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::from_args(&cli.config) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("paydesk: {e}");
            return ExitCode::from(2);
        }
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,sea_orm=warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
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
            if let Some(url) = &url {
                let ok = url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
                if !ok {
                    return Err("--url must be an absolute http:// or https:// URL".into());
                }
            }
            let db = app::open_database(&config).await?;
            let created = paydesk::db::shops::create(&db, name, url, Utc::now()).await?;
            let out = json!({
                "shop_id": created.shop.id,
                "secret_key": created.secret_key,
                "name": created.shop.name,
            });
            println!("{out}");
            Ok(())
        }
    }
}
