use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

use crate::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    ShopId,
    CardLast4,
    Amount,
}

/// What the dashboard's searches look in: each table, the index that finds text within its
/// columns (on SQLite an FTS5 table of that name), and the columns.
pub const SEARCHED: [(&str, &str, &[&str]); 4] = [
    ("customers", "customers_search", &["email", "first_name", "last_name"]),
    ("products", "products_search", &["name"]),
    ("plans", "plans_search", &["title"]),
    ("payments", "payments_search", &["card_holder"]),
];

/// The dashboard finds an object by the start of any word of its e-mail or names (or a card
/// holder's name), in any case, `ё` read as `е`. Without an index that is a read of every row;
/// these make it a read of the words that start so:
/// - on SQLite, an FTS5 table per table, kept by triggers (contentless: it holds the index and
///   no copy of the text);
/// - on PostgreSQL, a GIN index of the words (a `tsvector` of them, taken as they are).
///
/// Words are split at spaces and at ASCII punctuation other than `@ . + - _`, so that an
/// e-mail address is one word; [`SEPARATORS`] and SQLite's tokenizer agree on this.
///
/// An exact card's last four or amount are found by a plain index.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Payments as P;
        for (name, columns) in
            [("ix_payments_shop_last4", [P::ShopId, P::CardLast4]), ("ix_payments_shop_amount", [P::ShopId, P::Amount])]
        {
            manager.create_index(index(name, P::Table, &columns)).await?;
        }
        let db = manager.get_connection();
        match manager.get_database_backend() {
            DatabaseBackend::Postgres => {
                for (table, _, columns) in SEARCHED {
                    db.execute_unprepared(&postgres_index(table, columns)).await?;
                }
            }
            _ => {
                for (table, search, columns) in SEARCHED {
                    for statement in sqlite_search(table, search, columns) {
                        db.execute_unprepared(&statement).await?;
                    }
                }
            }
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for name in ["ix_payments_shop_last4", "ix_payments_shop_amount"] {
            manager.drop_index(Index::drop().name(name).table(Payments::Table).to_owned()).await?;
        }
        let db = manager.get_connection();
        for (table, search, _) in SEARCHED {
            let statements = match manager.get_database_backend() {
                DatabaseBackend::Postgres => vec![format!("DROP INDEX IF EXISTS ix_{table}_search")],
                _ => {
                    let mut drops: Vec<String> = ["insert", "update", "delete"]
                        .iter()
                        .map(|on| format!("DROP TRIGGER IF EXISTS {search}_{on}"))
                        .collect();
                    drops.push(format!("DROP TABLE IF EXISTS {search}"));
                    drops
                }
            };
            for statement in statements {
                db.execute_unprepared(&statement).await?;
            }
        }
        Ok(())
    }
}

/// What separates the words of a search (a PostgreSQL regular expression, written for a
/// string literal): spaces and ASCII punctuation other than `@ . + - _` (`?` and `$` as
/// `\x3f` and `\x24`).
pub const SEPARATORS: &str = r##"[\s!"#\x24%&''()*,/:;<=>\x3f\[\\\]^`{|}~]+"##;

/// The words of `columns` as PostgreSQL's search indexes hold them (the queries use the same
/// expression): lowercase, `ё` as `е`, split at [`SEPARATORS`].
pub fn search_words(columns: &[&str]) -> String {
    let text: Vec<String> = columns.iter().map(|c| format!("coalesce({c}, '')")).collect();
    format!(
        "array_to_tsvector(array_remove(regexp_split_to_array(replace(lower({}), 'ё', 'е'), '{SEPARATORS}'), ''))",
        text.join(" || ' ' || ")
    )
}

/// The word index of `table`'s `columns`.
fn postgres_index(table: &str, columns: &[&str]) -> String {
    format!("CREATE INDEX ix_{table}_search ON {table} USING gin (({}))", search_words(columns))
}

/// SQLite's FTS5 table of `table`'s `columns`, the triggers that keep it, and its first fill.
/// `ё` is written as `е` (FTS5 lowercases by itself, and splits words as [`SEPARATORS`] do).
fn sqlite_search(table: &str, search: &str, columns: &[&str]) -> Vec<String> {
    let list = columns.join(", ");
    let mut statements = vec![format!(
        "CREATE VIRTUAL TABLE {search} USING fts5({list}, content = '', tokenize = \"unicode61 remove_diacritics 0 tokenchars '@.+-_'\")"
    )];
    statements.extend(sqlite_triggers(table, search, columns, ""));
    statements.push(format!("INSERT INTO {search}(rowid, {list}) SELECT seq, {} FROM {table}", folded(table, columns)));
    statements
}

/// The triggers that keep the FTS5 table `search` of `table`'s `columns` as rows are added,
/// changed and removed, each run only `when` the row meets it (` WHEN …`, with its space, or
/// nothing for always).
pub(crate) fn sqlite_triggers(table: &str, search: &str, columns: &[&str], when: &str) -> [String; 3] {
    let list = columns.join(", ");
    let add = |row: &str| format!("INSERT INTO {search}(rowid, {list}) VALUES ({row}.seq, {});", folded(row, columns));
    let remove = |row: &str| {
        format!("INSERT INTO {search}({search}, rowid, {list}) VALUES ('delete', {row}.seq, {});", folded(row, columns))
    };
    [
        format!("CREATE TRIGGER {search}_insert AFTER INSERT ON {table}{when} BEGIN {} END", add("new")),
        format!(
            "CREATE TRIGGER {search}_update AFTER UPDATE OF {list} ON {table}{when} BEGIN {} {} END",
            remove("old"),
            add("new")
        ),
        format!("CREATE TRIGGER {search}_delete AFTER DELETE ON {table}{when} BEGIN {} END", remove("old")),
    ]
}

/// `columns` of `row` as the FTS5 tables hold them: `ё` written as `е`.
pub fn folded(row: &str, columns: &[&str]) -> String {
    columns.iter().map(|c| format!("replace(replace({row}.{c}, 'Ё', 'Е'), 'ё', 'е')")).collect::<Vec<_>>().join(", ")
}
