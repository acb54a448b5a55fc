//! Every shell example of README.md and `docs/`, run as written, as one reader would run
//! them in one terminal: one bash session for every page (variables and files carry from
//! page to page), README first and then the pages in the order of its table of
//! documentation, against one instance, with `paydesk` on the path and `curl` reaching the
//! instance at the address the docs use. After a command, `# STATUS BODY` (or `# BODY` for a command that is
//! not curl) is what it must answer: the status, and the fields shown (`…` in a string
//! matches any text; `, …]` lets an array go on; objects may always have more). A block whose
//! first line is `# not run: why` is only shown. Outside parties are the in-repo doubles. A
//! database the docs restore to (`sqlite://restored/…`) is, on PostgreSQL, a spare database
//! whose search path names the instance's schema.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::doubles::bepaid::Gateway as BepaidDouble;
use crate::doubles::smtp::Smtp;
use crate::doubles::stripe::StripeDouble;
use crate::helpers::*;

/// Where the docs say the instance answers.
const DOCS_BASE: &str = "http://127.0.0.1:3000";
/// bePaid's addresses in the docs, served by the double here.
const BEPAID_HOSTS: [&str; 2] = ["https://gateway.bepaid.by", "https://checkout.bepaid.by"];

/// The double's addresses standing for bePaid's gateway and its checkout: one server, named
/// two ways so that answers can be told apart.
fn bepaid_urls(bepaid: &BepaidDouble) -> (String, String) {
    (bepaid.url.clone(), bepaid.url.replace("127.0.0.1", "localhost"))
}

/// One command of a page, with the answer the page shows for it.
#[derive(Debug)]
struct Step {
    /// The page's file name (set once the page's steps are read).
    page: String,
    /// Where it starts in the page (1-based line).
    line: usize,
    command: String,
    expected: Option<Expected>,
}

#[derive(Debug)]
struct Expected {
    status: Option<u16>,
    body: Option<String>,
}

/// The pages in a reader's order: README.md, then the pages its table of documentation
/// lists, in its order, then any other page of `docs/` by name.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let table = readme.split("## Documentation").nth(1).expect("README's table of documentation");
    let mut order: Vec<PathBuf> = table
        .lines()
        .filter_map(|line| line.strip_prefix("| [docs/")?.split(']').next().map(|name| root.join("docs").join(name)))
        .collect();
    let mut rest: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !order.contains(p))
        .collect();
    rest.sort();
    order.extend(rest);
    std::iter::once(root.join("README.md")).chain(order).collect()
}

/// The steps of a page's ```sh blocks, in order (blocks marked `# not run:` left out).
fn steps_of(text: &str) -> Vec<Step> {
    let lines: Vec<&str> = text.lines().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```sh" {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && lines[end].trim_end() != "```" {
            end += 1;
        }
        let block = &lines[start..end];
        if !block.first().is_some_and(|l| l.starts_with("# not run:")) {
            steps.extend(split_block(block, start + 1));
        }
        i = end + 1;
    }
    steps
}

/// A block's commands: a command runs on while a quote is open or a line ends with `\`;
/// the comment lines right after it may show its answer.
fn split_block(block: &[&str], first_line: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut i = 0;
    while i < block.len() {
        let line = block[i];
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            i += 1;
            continue;
        }
        let start = i;
        let mut command = String::new();
        let mut quote: Option<char> = None;
        // A function or a loop runs on to its closing line.
        let mut nested = 0;
        loop {
            let line = block[i];
            command.push_str(line);
            command.push('\n');
            quote = open_quote(line, quote);
            if quote.is_none() {
                let code = line.trim();
                if code.ends_with('{') || code.ends_with(" do") || code.ends_with(" then") {
                    nested += 1;
                }
                if code.starts_with('}') || code == "done" || code == "fi" {
                    nested -= 1;
                }
            }
            i += 1;
            if i >= block.len() || (quote.is_none() && nested <= 0 && !line.trim_end().ends_with('\\')) {
                break;
            }
        }
        // The answer shown: `# 201 {…}` (or `# {…}`), its JSON going on over `#` lines.
        let mut expected = None;
        if i < block.len()
            && let Some(first) = block[i].strip_prefix("# ")
            && let Some((status, rest)) = answer_start(first)
        {
            let mut body = rest.to_string();
            i += 1;
            while depth(&body) > 0 && i < block.len() && block[i].starts_with('#') {
                body.push(' ');
                body.push_str(block[i].trim_start_matches('#').trim());
                i += 1;
            }
            let body = Some(body.trim().to_string()).filter(|b| !b.is_empty());
            expected = Some(Expected { status, body });
        }
        steps.push(Step { page: String::new(), line: first_line + start, command, expected });
    }
    steps
}

/// The quote still open at the end of `line`, given the one open at its start.
fn open_quote(line: &str, mut quote: Option<char>) -> Option<char> {
    let mut escaped = false;
    for c in line.chars() {
        match quote {
            Some('\'') if c == '\'' => quote = None,
            Some('\'') => {}
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '#' => break,
            None if c == '\'' || c == '"' => quote = Some(c),
            None => {}
        }
    }
    quote
}

/// Whether a comment line begins an answer: a status, a JSON value, or both.
fn answer_start(text: &str) -> Option<(Option<u16>, &str)> {
    let text = text.trim();
    if text.starts_with('{') || text.starts_with('[') {
        return Some((None, text));
    }
    let digits = text.get(..3).filter(|d| d.bytes().all(|b| b.is_ascii_digit()))?;
    let rest = &text[3..];
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((digits.parse().ok(), rest.trim()))
}

/// How many brackets are open at the end of `json` (outside strings).
fn depth(json: &str) -> i32 {
    let (mut depth, mut in_string, mut escaped) = (0, false, false);
    for c in json.chars() {
        match (in_string, c) {
            (true, _) if escaped => escaped = false,
            (true, '\\') => escaped = true,
            (true, '"') => in_string = false,
            (false, '"') => in_string = true,
            (false, '{' | '[') => depth += 1,
            (false, '}' | ']') => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// A shown answer as JSON: a bare `…` where a value may stand is any value, after the last
/// element of an array lets it go on, after the last member of an object is dropped.
fn shown_json(shown: &str) -> Result<Value, String> {
    let mut out = String::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in shown.chars() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            out.push(c);
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '…' => {
                let before = out.trim_end().chars().last();
                match before {
                    Some(':') => out.push_str("\"@@ANY@@\""),
                    Some('[') => out.push_str("\"@@MORE@@\""),
                    Some(',') if next_closer(&out) == Some(']') => out.push_str("\"@@MORE@@\""),
                    Some(',') => {
                        let cut = out.trim_end().len() - 1;
                        out.truncate(cut);
                    }
                    _ => {}
                }
            }
            _ => out.push(c),
        }
    }
    serde_json::from_str(&out).map_err(|e| format!("the shown answer is not JSON ({e}): {out}"))
}

/// The closing bracket of the container the text written so far is in.
fn next_closer(written: &str) -> Option<char> {
    let mut stack = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in written.chars() {
        match (in_string, c) {
            (true, _) if escaped => escaped = false,
            (true, '\\') => escaped = true,
            (true, '"') => in_string = false,
            (false, '"') => in_string = true,
            (false, '{') => stack.push('}'),
            (false, '[') => stack.push(']'),
            (false, '}' | ']') => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.last().copied()
}

/// Whether `actual` answers what `shown` shows; else where it differs.
fn matches(shown: &Value, actual: &Value, at: &str) -> Result<(), String> {
    let differs = || Err(format!("at {at}: shown {shown}, got {actual}"));
    match (shown, actual) {
        (Value::String(s), _) if s == "@@ANY@@" => Ok(()),
        (Value::String(s), Value::String(a)) if s.contains('…') => {
            let parts: Vec<&str> = s.split('…').collect();
            let (first, last) = (parts[0], parts[parts.len() - 1]);
            let mut rest = a.strip_prefix(first).ok_or(()).or_else(|_| differs().map(|_| ""))?;
            for middle in &parts[1..parts.len() - 1] {
                match rest.find(middle) {
                    Some(at) => rest = &rest[at + middle.len()..],
                    None => return differs(),
                }
            }
            if rest.ends_with(last) { Ok(()) } else { differs() }
        }
        (Value::Object(s), Value::Object(a)) => {
            for (key, value) in s {
                match a.get(key) {
                    Some(got) => matches(value, got, &format!("{at}.{key}"))?,
                    None => return Err(format!("at {at}: no `{key}` in {actual}")),
                }
            }
            Ok(())
        }
        (Value::Array(s), Value::Array(a)) => {
            let open = s.last().is_some_and(|v| v == "@@MORE@@");
            let fixed = if open { &s[..s.len() - 1] } else { &s[..] };
            if a.len() < fixed.len() || (!open && a.len() != fixed.len()) {
                return differs();
            }
            for (n, (value, got)) in fixed.iter().zip(a).enumerate() {
                matches(value, got, &format!("{at}[{n}]"))?;
            }
            Ok(())
        }
        _ if shown == actual => Ok(()),
        _ => differs(),
    }
}

/// The bash script of a page: each step's output, status lines and exit code go to files
/// of `dir` named by its number.
fn script(steps: &[Step], dir: &Path) -> String {
    let d = dir.display();
    let mut script = String::from(
        "set -o pipefail\n\
         curl() {\n  local args=()\n  for a in \"$@\"; do\n    a=\"${a//http:\\/\\/127.0.0.1:3000/$PD_BASE}\"\n    \
         a=\"${a//https:\\/\\/gateway.bepaid.by/$PD_GATEWAY}\"\n    a=\"${a//https:\\/\\/checkout.bepaid.by/$PD_CHECKOUT}\"\n    \
         args+=(\"$a\")\n  done\n  command curl -w '%{stderr}@@STATUS %{http_code}\\n' \"${args[@]}\"\n}\n\
         paydesk() {\n  if [ -n \"$PD_SPARE\" ] && [ \"${DATABASE_URL#sqlite://restored/}\" != \"$DATABASE_URL\" ]; then\n    \
         DATABASE_URL=\"$PD_SPARE\" command paydesk \"$@\"\n  else\n    command paydesk \"$@\"\n  fi\n}\n",
    );
    for (n, step) in steps.iter().enumerate() {
        script.push_str(&format!("{{\n{}}} > {d}/{n}.out 2> {d}/{n}.err\necho $? > {d}/{n}.rc\n", step.command));
    }
    script
}

/// Runs the pages' steps on `app` in one terminal and checks every answer shown, stopping at
/// the first that disagrees (what comes after may depend on it).
async fn run_pages(app: &TestApp, pages: &[PathBuf], bepaid: &BepaidDouble) -> Result<usize, String> {
    let mut steps = Vec::new();
    for page in pages {
        let name = page.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(page).unwrap();
        steps.extend(steps_of(&text).into_iter().map(|step| Step { page: name.clone(), ..step }));
    }
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_paydesk"), bin.join("paydesk")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let script_path = work.path().join("terminal.sh");
    std::fs::write(&script_path, script(&steps, &out)).unwrap();
    // The instance runs on this test's runtime: the terminal runs beside it, at most 20 minutes.
    let mut command = std::process::Command::new("timeout");
    command
        .args(["1200", "bash"])
        .arg(&script_path)
        .current_dir(work.path())
        .env("PATH", path)
        .env("HOME", work.path())
        .env("DATABASE_URL", &app.database_url)
        .env("PAYDESK_KEY_ENCRYPTION_KEY", TEST_KEK)
        .env("RUST_LOG", "warn")
        .env("PD_BASE", &app.base)
        .env("PD_GATEWAY", bepaid_urls(bepaid).0)
        .env("PD_CHECKOUT", bepaid_urls(bepaid).1);
    if matches!(app.backend, Backend::Postgres) {
        command.env("PD_SPARE", crate::backup::spare_postgres(app).await);
    }
    let ran = tokio::task::spawn_blocking(move || command.output()).await.unwrap().unwrap();
    if ran.status.code() == Some(124) {
        return Err("the examples ran over 20 minutes".into());
    }
    for (n, step) in steps.iter().enumerate() {
        let read = |ext: &str| std::fs::read_to_string(out.join(format!("{n}.{ext}"))).unwrap_or_default();
        let where_ = format!("{}:{}: {}", step.page, step.line, step.command.trim());
        let rc = read("rc");
        if rc.trim() != "0" {
            let (stdout, stderr) = (read("out"), read("err"));
            return Err(format!(
                "{where_}\nexited {} (the terminal stopped here)\nstdout: {stdout}\nstderr: {stderr}\n{}",
                rc.trim(),
                String::from_utf8_lossy(&ran.stderr)
            ));
        }
        let Some(expected) = &step.expected else { continue };
        let stdout = read("out");
        // What the instance and the doubles answer with their own addresses, as the docs
        // write them.
        let (gateway, checkout) = bepaid_urls(bepaid);
        let answer =
            stdout.replace(&app.base, DOCS_BASE).replace(&gateway, BEPAID_HOSTS[0]).replace(&checkout, BEPAID_HOSTS[1]);
        if let Some(status) = expected.status {
            let statuses: Vec<u16> =
                read("err").lines().filter_map(|l| l.strip_prefix("@@STATUS ")?.trim().parse().ok()).collect();
            if statuses.last() != Some(&status) {
                return Err(format!("{where_}\nanswered {statuses:?}, the page shows {status}\n{answer}"));
            }
        }
        if let Some(body) = &expected.body {
            let shown = shown_json(body).map_err(|e| format!("{where_}\n{e}"))?;
            let got: Value = serde_json::from_str(answer.trim())
                .map_err(|e| format!("{where_}\nthe answer is not JSON ({e}): {answer}"))?;
            matches(&shown, &got, "$").map_err(|e| format!("{where_}\n{e}"))?;
        }
    }
    Ok(steps.len())
}

backend_tests! {
    async fn every_shell_example_in_the_docs_runs_in_one_terminal_and_answers_as_shown(backend) {
        let smtp = Smtp::shared().await;
        let stripe = StripeDouble::start().await;
        let bepaid = BepaidDouble::start().await;
        let args = paydesk::config::ConfigArgs {
            stripe_api_url: Some(stripe.url.clone()),
            smtp_url: Some(smtp.url()),
            mail_from: Some("shop@mail.example".into()),
            // events-and-webhooks.md receives deliveries on this machine, as a developer would.
            webhooks_allow_private: Some("on".into()),
            ..Default::default()
        };
        let app = TestApp::spawn_with(backend, args).await;
        let pages = pages();
        assert_eq!(pages[1].file_name().unwrap(), "api.md", "README's table comes first: {pages:?}");
        match run_pages(&app, &pages, &bepaid).await {
            Ok(ran) => assert!(ran > 50, "only {ran} commands were found in the docs"),
            Err(e) => panic!("the docs disagree with the service:\n\n{e}"),
        }
    }
}

#[test]
fn answers_shown_in_the_docs_read_as_patterns() {
    let shown = shown_json(r#"{"id": "prd_…", "list": [1, …], "any": …, "more": true, …}"#).unwrap();
    let got = serde_json::json!({"id": "prd_123", "list": [1, 2, 3], "any": {"x": 1}, "more": true, "other": 5});
    assert_eq!(matches(&shown, &got, "$"), Ok(()));
    let exact = shown_json(r#"{"list": [1]}"#).unwrap();
    assert!(matches(&exact, &got, "$").is_err(), "an array without `…` has exactly its elements");
    let block = ["curl -s $PD/x -d '{", "  \"a\": 1}'", "# 201 {\"a\":", "#      1}", "echo done"];
    let steps = split_block(&block, 10);
    assert_eq!(steps.len(), 2);
    assert_eq!((steps[0].line, steps[0].expected.as_ref().unwrap().status), (10, Some(201)));
    assert_eq!(steps[0].expected.as_ref().unwrap().body.as_deref(), Some("{\"a\": 1}"));
}
