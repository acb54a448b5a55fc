//! The code's layers (README, "Layout"), checked by folder: a file inherits the rules of the
//! folder it sits in, so a new file needs no change here.
//! - Every folder (or file) directly under `src/` (or `src/core/`, the lower layers' crate)
//!   imports only from the layers below it and from itself; no front end imports from another.
//! - Within any folder, the modules never import each other in a circle: what several of them
//!   share lives in one place below them.
//! - Only `db/` builds queries: elsewhere sea-orm is named only for connections, transactions,
//!   errors and the column types of the rules' vocabularies.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each entry of `src/` with its layer; `lib.rs` and `main.rs` only declare and call.
const LAYERS: &[(&str, u8)] = &[
    ("domain", 1),
    ("config", 1),
    ("db", 2),
    ("external", 2),
    ("web", 3),
    ("services", 4),
    ("frontends", 5),
    ("app", 6),
];

/// Folders whose entries are independent faces: none imports another.
const INDEPENDENT: &[&str] = &["frontends"];

/// What code outside `db/` may name of sea-orm: connections, transactions and their errors,
/// the backend, and what the vocabularies and currencies need to be stored as columns.
const SEA_ORM_OUTSIDE_DB: &[&str] = &[
    "DatabaseConnection",
    "DatabaseBackend",
    "ConnectionTrait",
    "TransactionTrait",
    "DbErr",
    "SqlErr",
    "EnumIter",
    "DeriveActiveEnum",
    "Value",
    "TryGetable",
    "TryGetError",
    "ColIdx",
    "QueryResult",
    "ValueType",
    "ValueTypeErr",
    "ArrayType",
    "ColumnType",
    "Nullable",
    "PgListener",
];

fn layer(entry: &str) -> u8 {
    LAYERS.iter().find(|(m, _)| *m == entry).map(|(_, l)| *l).unwrap_or_else(|| panic!("src/{entry} has no layer"))
}

/// One source file: its module path (`["services", "billing"]`) and its text.
struct File {
    relative: String,
    module: Vec<String>,
    source: String,
}

fn files() -> Vec<File> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    walk(&src, &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
            // The lower layers are a crate of their own in `src/core/`, re-exported by name.
            let logical = relative.strip_prefix("core/").unwrap_or(&relative);
            let mut module: Vec<String> = logical.trim_end_matches(".rs").split('/').map(String::from).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                module.pop();
            }
            File { relative, module, source: std::fs::read_to_string(&path).unwrap() }
        })
        .collect()
}

/// Every path a file names from `start` (`crate`, `super` or `sea_orm`), as segments after it,
/// with `use` groups expanded: `crate::{a, b::{c, d}}` gives `a`, `b::c` and `b::d`. `super`
/// paths come with a leading `super` per level. Comments are left out.
fn paths(source: &str, start: &str) -> Vec<(Vec<String>, bool)> {
    let mut found = Vec::new();
    let mut in_inline_module = false;
    for line in source.lines().map(str::trim) {
        if line.starts_with("//") {
            continue;
        }
        if line.starts_with("mod ") && line.ends_with('{') {
            in_inline_module = true;
        }
        let code: String = line.split("//").next().unwrap_or("").to_string();
        let needle = format!("{start}::");
        let mut at = 0;
        while let Some(i) = code[at..].find(&needle) {
            let begin = at + i;
            at = begin + needle.len();
            let before = code[..begin].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut prefix = vec![];
            if start == "super" {
                prefix.push("super".to_string());
                while code[at..].starts_with("super::") {
                    prefix.push("super".to_string());
                    at += "super::".len();
                }
            }
            let (trees, _) = tree(&code[at..]);
            for t in trees {
                let mut full = prefix.clone();
                full.extend(t);
                found.push((full, in_inline_module));
            }
        }
    }
    found
}

/// Parses a use tree at the start of `text`; returns its leaf paths and the bytes read.
fn tree(text: &str) -> (Vec<Vec<String>>, usize) {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut segments = Vec::new();
    let mut at = 0;
    loop {
        if text[at..].starts_with('{') {
            at += 1;
            let mut leaves = Vec::new();
            loop {
                let rest = &text[at..];
                let skipped = rest.len() - rest.trim_start().len();
                at += skipped;
                if text[at..].starts_with('}') || at >= text.len() {
                    at += 1;
                    break;
                }
                let (inner, read) = tree(&text[at..]);
                for leaf in inner {
                    let mut full = segments.clone();
                    full.extend(leaf);
                    leaves.push(full);
                }
                at += read.max(1);
                let rest = &text[at.min(text.len())..];
                let skipped = rest.len() - rest.trim_start().len();
                at += skipped;
                if text[at.min(text.len())..].starts_with(',') {
                    at += 1;
                }
            }
            return (leaves, at.min(text.len()));
        }
        let name = ident(&text[at..]);
        if name.is_empty() {
            return (vec![segments], at);
        }
        at += name.len();
        segments.push(name);
        if text[at..].starts_with("::") {
            at += 2;
        } else {
            return (vec![segments], at);
        }
    }
}

/// The module a path names from `from`: its longest prefix that is a module of the crate.
fn resolve(from: &[String], path: &[String], inline: bool, modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    let mut base: Vec<String> = Vec::new();
    let mut rest = path;
    if path.first().is_some_and(|s| s == "super") {
        base = from.to_vec();
        // `super` in a file's inline module (its tests) is the file itself.
        if inline {
            rest = &rest[1..];
        }
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
    }
    let mut target = base.clone();
    for segment in rest {
        target.push(segment.clone());
        if !modules.contains(&target) {
            target.pop();
            break;
        }
    }
    target
}

/// Each file's module with the modules it imports.
fn imports(files: &[File]) -> Vec<(&File, BTreeSet<Vec<String>>)> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    files
        .iter()
        .map(|file| {
            let mut named = BTreeSet::new();
            for (path, inline) in paths(&file.source, "crate").into_iter().chain(paths(&file.source, "super")) {
                let target = resolve(&file.module, &path, inline, &modules);
                if !target.is_empty() && target != file.module {
                    named.insert(target);
                }
            }
            (file, named)
        })
        .collect()
}

#[test]
fn each_folder_imports_only_from_the_layers_below_it() {
    let files = files();
    let mut wrong = Vec::new();
    for (file, named) in imports(&files) {
        let Some(entry) = file.module.first() else { continue };
        for target in named {
            let allowed = if target[0] == *entry {
                // Within a folder of independent faces, each imports only itself.
                !INDEPENDENT.contains(&entry.as_str()) || target.get(1).is_none() || target.get(1) == file.module.get(1)
            } else {
                layer(&target[0]) < layer(entry)
            };
            if !allowed {
                wrong.push(format!("{} imports crate::{}", file.relative, target.join("::")));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layers:\n{}", wrong.join("\n"));
}

#[test]
fn no_modules_of_a_folder_import_each_other_in_a_circle() {
    let files = files();
    // For each folder, which of its entries import which: an import from `a::x::y` of `a::z`
    // is an edge from `x` to `z` in folder `a`.
    let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (file, named) in imports(&files) {
        for target in named {
            let common = file.module.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if let (Some(from), Some(to)) = (file.module.get(common), target.get(common)) {
                let folder = file.module[..common].to_vec();
                edges.entry(folder).or_default().entry(from.clone()).or_default().insert(to.clone());
            }
        }
    }
    let mut circles = Vec::new();
    for (folder, graph) in &edges {
        if let Some(circle) = find_circle(graph) {
            circles.push(format!("src/{}: {}", folder.join("/"), circle.join(" → ")));
        }
    }
    assert!(circles.is_empty(), "modules importing each other in a circle:\n{}", circles.join("\n"));
}

/// A circle of the graph, if it has one (depth-first search).
fn find_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn only_db_builds_queries() {
    let mut wrong = Vec::new();
    for file in files().iter().filter(|f| f.module.first().is_none_or(|m| m != "db")) {
        for (path, _) in paths(&file.source, "sea_orm") {
            let named = path.iter().find(|s| !matches!(s.as_str(), "sea_query" | "sqlx" | "postgres"));
            if named.is_some_and(|n| !SEA_ORM_OUTSIDE_DB.contains(&n.as_str())) {
                wrong.push(format!("{} names sea_orm::{}", file.relative, path.join("::")));
            }
        }
    }
    assert!(wrong.is_empty(), "query building outside src/core/db/:\n{}", wrong.join("\n"));
}

#[test]
fn the_path_reader_expands_groups_and_levels() {
    let source = "use crate::{a, b::{c, d}};\nlet x = super::super::e::f();\n// crate::ignored\n";
    let crate_paths: Vec<String> = paths(source, "crate").into_iter().map(|(p, _)| p.join("::")).collect();
    assert_eq!(crate_paths, ["a", "b::c", "b::d"]);
    let super_paths: Vec<String> = paths(source, "super").into_iter().map(|(p, _)| p.join("::")).collect();
    assert_eq!(super_paths, ["super::super::e::f"]);
}
