//! The code's layers (README, "Layout"): every module imports only from the layers below it,
//! and no front end imports from another.

use std::collections::BTreeSet;
use std::path::Path;

/// Each top-level module of `src/` with its layer (README's table).
const LAYERS: &[(&str, u8)] = &[
    ("domain", 1),
    ("config", 1),
    ("db", 2),
    ("acquirer", 2),
    ("i18n", 2),
    ("locale", 2),
    ("csrf", 2),
    ("urls", 2),
    ("vault", 2),
    ("outbound", 2),
    ("telemetry", 2),
    ("error", 3),
    ("state", 3),
    ("views", 3),
    ("passwords", 4),
    ("guard", 4),
    ("events", 4),
    ("keys", 4),
    ("shops", 4),
    ("billing", 5),
    ("payments", 5),
    ("refunds", 5),
    ("subscriptions", 5),
    ("scheduler", 5),
    ("webhooks", 5),
    ("api", 6),
    ("pay", 6),
    ("dashboard", 6),
    ("ops", 6),
    ("app", 7),
    ("cli", 7),
    ("openapi", 7),
];

/// Imports within a layer that are allowed: among the services, the engine lies below those
/// that start it, and payments below subscriptions; the command line serves the app; a key
/// change goes through the shop cache; the pages' words format money with the locale data.
const WITHIN: &[(&str, &str)] = &[
    ("payments", "billing"),
    ("subscriptions", "billing"),
    ("scheduler", "billing"),
    ("scheduler", "refunds"),
    ("subscriptions", "payments"),
    ("cli", "app"),
    ("keys", "shops"),
    ("app", "openapi"),
    ("i18n", "locale"),
];

fn layer(module: &str) -> u8 {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l).unwrap_or_else(|| panic!("{module} has no layer"))
}

/// The top-level modules a file names with `crate::` (comments left out).
fn imports(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in source.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                None => vec![rest],
            };
            for name in names {
                let name: String = name.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != "self" {
                    found.insert(name);
                }
            }
        }
    }
    found
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn modules_import_only_from_the_layers_below_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let module = relative.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        for import in imports(&std::fs::read_to_string(&file).unwrap()) {
            let allowed = import == module
                || layer(&import) < layer(&module)
                || WITHIN.contains(&(module.as_str(), import.as_str()));
            if !allowed {
                wrong.push(format!("{relative} imports crate::{import}"));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layers:\n{}", wrong.join("\n"));
}
