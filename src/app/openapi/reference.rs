//! `/docs`: the API reference as one server-rendered page, read from the OpenAPI document
//! itself (so the two cannot disagree), with no script and nothing from elsewhere.

use askama::Template;
use serde_json::{Map, Value};

/// The reference page.
#[derive(Template)]
#[template(path = "docs.html")]
pub struct Reference {
    pub title: String,
    pub description: String,
    pub base_url: String,
    pub tags: Vec<Tag>,
    pub schemas: Vec<SchemaDoc>,
}

/// A group of operations.
pub struct Tag {
    pub name: String,
    pub anchor: String,
    pub description: String,
    pub operations: Vec<Operation>,
}

/// One method on one path.
pub struct Operation {
    pub method: String,
    pub path: String,
    pub anchor: String,
    pub summary: String,
    pub description: String,
    pub public: bool,
    pub params: Vec<Field>,
    pub body: Option<Kind>,
    pub responses: Vec<Answer>,
}

/// A parameter or a field of an object (`description` and `rules` are HTML).
pub struct Field {
    pub name: String,
    /// Where a parameter goes (`path`, `query`, `header`); empty for fields.
    pub place: String,
    pub kind: Kind,
    pub required: bool,
    pub description: String,
    pub rules: String,
}

/// A type as people read it, linking to a named schema when it is one.
pub struct Kind {
    pub text: String,
    pub link: Option<String>,
}

/// One possible answer.
pub struct Answer {
    pub status: String,
    pub description: String,
    pub kinds: Vec<(String, Kind)>,
    pub headers: Vec<String>,
}

/// A named schema: an object's fields, or a vocabulary's words.
pub struct SchemaDoc {
    pub name: String,
    pub anchor: String,
    pub description: String,
    pub fields: Vec<Field>,
    pub words: Vec<String>,
}

fn text(value: &Value, key: &str) -> String {
    value.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

/// Prose of the document as HTML: escaped, with `code` spans set as code.
fn prose(raw: &str) -> String {
    let escaped = raw.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
    let mut html = String::with_capacity(escaped.len());
    for (i, part) in escaped.split('`').enumerate() {
        match i % 2 {
            1 => html.push_str(&format!("<code>{part}</code>")),
            _ => html.push_str(part),
        }
    }
    html
}

/// A description of the document, as HTML.
fn described(value: &Value, key: &str) -> String {
    prose(&text(value, key))
}

/// The anchor of a schema named `name`.
fn schema_anchor(name: &str) -> String {
    format!("schema-{name}")
}

/// How a schema reads: `string`, `array of Product`, `integer or string`, `Currency or null`.
fn kind(schema: &Value) -> Kind {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or(reference).to_string();
        return Kind { link: Some(schema_anchor(&name)), text: name };
    }
    if let Some(variants) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
        let kinds: Vec<Kind> = variants.iter().map(kind).collect();
        let link = kinds.iter().find_map(|k| k.link.clone());
        let text = kinds.into_iter().map(|k| k.text).collect::<Vec<_>>().join(" or ");
        return Kind { text, link };
    }
    let types: Vec<String> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.clone()],
        Some(Value::Array(many)) => many.iter().filter_map(|t| t.as_str().map(str::to_string)).collect(),
        _ => vec!["any".to_string()],
    };
    let mut link = None;
    let words: Vec<String> = types
        .into_iter()
        .map(|t| match t.as_str() {
            "array" => {
                let items = kind(schema.get("items").unwrap_or(&Value::Null));
                link = items.link;
                format!("array of {}", items.text)
            }
            "string" | "integer" => match schema.get("format").and_then(Value::as_str) {
                Some(format) => format!("{t} ({format})"),
                None => t,
            },
            _ => t,
        })
        .collect();
    Kind { text: words.join(" or "), link }
}

/// The constraints a schema states, in words.
fn rules(schema: &Value) -> String {
    let mut rules = Vec::new();
    if let Some(words) = schema.get("enum").and_then(Value::as_array).filter(|w| w.len() <= 30) {
        let words: Vec<String> = words.iter().map(|w| w.as_str().map_or(w.to_string(), |s| format!("`{s}`"))).collect();
        rules.push(format!("one of {}", words.join(", ")));
    }
    for (key, word) in [
        ("minLength", "at least {} characters"),
        ("maxLength", "at most {} characters"),
        ("minimum", "from {}"),
        ("maximum", "up to {}"),
        ("pattern", "matches `{}`"),
        ("default", "default {}"),
    ] {
        if let Some(value) = schema.get(key) {
            let value = value.as_str().map_or(value.to_string(), str::to_string);
            rules.push(word.replace("{}", &value));
        }
    }
    if let Some(example) = schema.get("examples").and_then(|e| e.get(0)).or_else(|| schema.get("example"))
        && !example.is_object()
        && !example.is_array()
    {
        rules.push(format!("e.g. {example}"));
    }
    rules.join("; ")
}

/// The fields of an object schema.
fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map_or(vec![], |r| r.iter().filter_map(Value::as_str).collect());
    let empty = Map::new();
    let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    properties
        .iter()
        .map(|(name, property)| Field {
            name: name.clone(),
            place: String::new(),
            kind: kind(property),
            required: required.contains(&name.as_str()),
            description: described(property, "description"),
            rules: prose(&rules(property)),
        })
        .collect()
}

/// The page for `document` (the OpenAPI document as JSON) served at `base_url`.
pub fn reference(document: &Value, base_url: &str) -> Reference {
    let info = document.get("info").cloned().unwrap_or(Value::Null);
    let mut tags: Vec<Tag> = document.get("tags").and_then(Value::as_array).map_or(vec![], |tags| {
        tags.iter()
            .map(|t| Tag {
                name: text(t, "name"),
                anchor: format!("tag-{}", text(t, "name").to_lowercase().replace(' ', "-")),
                description: described(t, "description"),
                operations: vec![],
            })
            .collect()
    });
    let empty = Map::new();
    let paths = document.get("paths").and_then(Value::as_object).unwrap_or(&empty);
    for (path, item) in paths {
        for method in ["get", "post", "put", "delete"] {
            let Some(operation) = item.get(method) else { continue };
            let tag = operation.get("tags").and_then(|t| t.get(0)).and_then(Value::as_str).unwrap_or("");
            let params = operation.get("parameters").and_then(Value::as_array).map_or(vec![], |params| {
                params
                    .iter()
                    .map(|p| {
                        let schema = p.get("schema").cloned().unwrap_or(Value::Null);
                        Field {
                            name: text(p, "name"),
                            place: text(p, "in"),
                            kind: kind(&schema),
                            required: p.get("required").and_then(Value::as_bool).unwrap_or(false),
                            description: described(p, "description"),
                            rules: prose(&rules(&schema)),
                        }
                    })
                    .collect()
            });
            let body = operation.pointer("/requestBody/content/application~1json/schema").map(kind);
            let mut responses: Vec<Answer> = operation
                .get("responses")
                .and_then(Value::as_object)
                .unwrap_or(&empty)
                .iter()
                .map(|(status, answer)| Answer {
                    status: status.clone(),
                    description: described(answer, "description"),
                    kinds: answer.get("content").and_then(Value::as_object).map_or(vec![], |content| {
                        content
                            .iter()
                            .map(|(media, c)| (media.clone(), kind(c.get("schema").unwrap_or(&Value::Null))))
                            .collect()
                    }),
                    headers: answer
                        .get("headers")
                        .and_then(Value::as_object)
                        .map_or(vec![], |h| h.keys().filter(|k| *k != "X-Request-Id").cloned().collect()),
                })
                .collect();
            responses.sort_by(|a, b| a.status.cmp(&b.status));
            let public = operation
                .get("security")
                .and_then(Value::as_array)
                .is_some_and(|s| s.iter().all(|r| r == &Value::Object(Map::new())));
            let entry = Operation {
                method: method.to_uppercase(),
                path: path.clone(),
                anchor: format!("{method}-{}", path.trim_matches('/').replace(['/', '{', '}'], "-")),
                summary: text(operation, "summary"),
                description: described(operation, "description"),
                public,
                params,
                body,
                responses,
            };
            if let Some(group) = tags.iter_mut().find(|t| t.name == tag) {
                group.operations.push(entry);
            }
        }
    }
    let schemas = document
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .unwrap_or(&empty)
        .iter()
        .map(|(name, schema)| SchemaDoc {
            name: name.clone(),
            anchor: schema_anchor(name),
            description: described(schema, "description"),
            fields: fields(schema),
            words: schema
                .get("enum")
                .and_then(Value::as_array)
                .map_or(vec![], |w| w.iter().filter_map(|w| w.as_str().map(str::to_string)).collect()),
        })
        .collect();
    Reference {
        title: text(&info, "title"),
        description: described(&info, "description"),
        base_url: base_url.to_string(),
        tags,
        schemas,
    }
}
