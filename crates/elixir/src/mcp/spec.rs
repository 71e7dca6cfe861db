//! The tool-spec framework's declarations: every tool is declared once as a [`ToolSpec`]
//! (group, title, family description, scope, kinds, flags, arguments, result fields, docs
//! pointer, handler), from which come, at start-up, the per-kind mcp-door declarations
//! (SURFACE §9), the generated per-tool sections of the `tools-<group>` pages, and the
//! metering set. What runs per call is `mcp::call`'s: [`ToolSpec::decl`] hands the door a
//! closure into [`call::run`], which runs the handler, adds `meta`, applies the result cap and
//! hands the door the answer's error code and text as values. Which tools exist is the
//! registry's (`crate::tools`).

use std::sync::Arc;

use mcp_door::ToolDecl;
use mcp_door::model::ToolAnnotations;
use serde_json::{Map, Value, json};

use crate::access::kinds::Kind;
use crate::content::Generated;
use crate::mcp::call::{self, CallSpec, SpecHandler};
use crate::services::Services;

/// The tool groups, in declaration order (SURFACE §9 rule 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    Account,
    Players,
    Battles,
    Cards,
    Clans,
    War,
    Rankings,
    Collections,
    Live,
    Timeline,
    Service,
    Help,
}

impl Group {
    pub const ALL: [Group; 12] = [
        Group::Account,
        Group::Players,
        Group::Battles,
        Group::Cards,
        Group::Clans,
        Group::War,
        Group::Rankings,
        Group::Collections,
        Group::Live,
        Group::Timeline,
        Group::Service,
        Group::Help,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Group::Account => "Account",
            Group::Players => "Players",
            Group::Battles => "Battles",
            Group::Cards => "Cards",
            Group::Clans => "Clans",
            Group::War => "War",
            Group::Rankings => "Rankings",
            Group::Collections => "Collections",
            Group::Live => "Live",
            Group::Timeline => "Timeline",
            Group::Service => "Service",
            Group::Help => "Help",
        }
    }

    /// The documentation page of the group (`tools-account` …).
    pub fn page(self) -> String {
        format!("tools-{}", self.label().to_lowercase())
    }
}

/// The flags of SURFACE.md's tables, published in each tool's `_meta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// Windowed.
    W,
    /// Takes `season`.
    S,
    /// Two sizes via `verbosity`.
    V,
    /// Pages by cursor.
    Cc,
    /// Pages by offset.
    Co,
    /// Takes `live`.
    L,
    /// Sets `destructiveHint`.
    D,
    /// Sets `openWorldHint`.
    O,
    /// Runs under the heavy-query budget.
    H,
    /// Costs no daily quota.
    U,
}

impl Flag {
    pub fn as_str(self) -> &'static str {
        match self {
            Flag::W => "W",
            Flag::S => "S",
            Flag::V => "V",
            Flag::Cc => "Cc",
            Flag::Co => "Co",
            Flag::L => "L",
            Flag::D => "D",
            Flag::O => "O",
            Flag::H => "H",
            Flag::U => "U",
        }
    }
}

pub const SCOPE_READ: &str = "cr:read";
pub const SCOPE_ACCOUNT: &str = "account:write";
pub const SCOPE_RECORDINGS: &str = "recordings:write";
pub const SCOPE_FEEDBACK: &str = "feedback:write";

/// One argument.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: &'static str,
    /// Its JSON Schema, including a one-line `description`.
    pub schema: Value,
    pub required: bool,
    /// Declared only on agent and integration doors (`on_behalf_of`, `display_name`).
    pub agent_only: bool,
    /// Declared only on the person door (`primary_player_tag`).
    pub person_only: bool,
}

impl Param {
    pub fn new(name: &'static str, schema: Value) -> Self {
        Self {
            name,
            schema,
            required: false,
            agent_only: false,
            person_only: false,
        }
    }

    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    pub fn agent_only(mut self) -> Self {
        self.agent_only = true;
        self
    }

    pub fn person_only(mut self) -> Self {
        self.person_only = true;
        self
    }

    fn declared_for(&self, kind: Kind) -> bool {
        !(self.agent_only && kind == Kind::Person || self.person_only && kind != Kind::Person)
    }
}

/// One tool, declared once.
#[derive(Clone)]
pub struct ToolSpec {
    pub name: &'static str,
    pub group: Group,
    /// The title without its group.
    pub title: &'static str,
    /// Starts with the family label (`Reference tool:` …); 40–600 characters.
    pub description: String,
    pub scope: &'static str,
    pub kinds: Vec<Kind>,
    pub flags: Vec<Flag>,
    /// Arguments in declaration order; `verbosity` is added to every tool.
    pub params: Vec<Param>,
    /// What `verbosity: "compact"` drops on two-size tools; `None` for one-size tools.
    pub compact_drops: Option<&'static str>,
    /// Top-level result fields: name, schema, always present.
    pub output: Vec<(&'static str, Value, bool)>,
    /// The `docs` pointer answers carry unless they name a better one.
    pub docs: String,
    /// The `result_too_large` hint.
    pub too_large_hint: String,
    pub handler: SpecHandler,
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ToolSpec {
    /// `"<Group> · <Title>"`.
    pub fn full_title(&self) -> String {
        format!("{} · {}", self.group.label(), self.title)
    }

    pub fn has(&self, flag: Flag) -> bool {
        self.flags.contains(&flag)
    }

    fn verbosity(&self) -> Value {
        let description = match self.compact_drops {
            Some(drops) => format!("Size of the answer; compact drops {drops}."),
            None => "One size; accepted and ignored.".to_owned(),
        };
        json!({"type": "string", "enum": ["full", "compact"], "default": "full", "description": description})
    }

    /// The published input schema for `kind`.
    pub fn input_schema(&self, kind: Kind) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in self.params.iter().filter(|p| p.declared_for(kind)) {
            properties.insert(p.name.to_owned(), p.schema.clone());
            if p.required {
                required.push(Value::String(p.name.to_owned()));
            }
        }
        properties.insert("verbosity".into(), self.verbosity());
        let mut schema =
            json!({"type": "object", "properties": properties, "additionalProperties": false});
        if !required.is_empty() {
            schema["required"] = Value::Array(required);
        }
        schema
    }

    /// The published output schema: the envelope plus the tool's own fields.
    pub fn output_schema(&self) -> Value {
        let mut properties = Map::new();
        let mut required: Vec<Value> = Vec::new();
        for (name, schema, always) in &self.output {
            properties.insert((*name).to_owned(), schema.clone());
            if *always {
                required.push(json!(name));
            }
        }
        properties.insert(
            "applied".into(),
            json!({"type": "object", "description": "What was used: only this tool's own keys."}),
        );
        properties.insert("notes".into(), json!({"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 240}, "description": "Caveats to repeat to the user."}));
        properties.insert("docs".into(), json!({"type": "string", "description": "A page or page#section of the documentation."}));
        properties.insert("meta".into(), json!({"type": "object", "required": ["as_of", "request_id", "disclaimer", "contract_version"], "description": "as_of, request_id, disclaimer, contract_version, quota and optional keys."}));
        for k in ["applied", "notes", "docs", "meta"] {
            required.push(json!(k));
        }
        json!({"type": "object", "properties": properties, "required": required})
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::with_title(self.full_title())
            .read_only(self.scope == SCOPE_READ)
            .destructive(self.has(Flag::D))
            .open_world(self.has(Flag::O))
    }

    fn meta(&self) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(
            "elixir.poapkings.com/tool".into(),
            json!({
                "group": self.group.label(),
                "scope": self.scope,
                "flags": self.flags.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
            }),
        );
        meta
    }

    /// The mcp-door declaration for `kind`'s catalog.
    pub fn decl(&self, kind: Kind, services: &Arc<Services>) -> ToolDecl {
        let spec = Arc::new(CallSpec {
            name: self.name,
            docs: self.docs.clone(),
            too_large_hint: self.too_large_hint.clone(),
            handler: Arc::clone(&self.handler),
        });
        let services = Arc::clone(services);
        let kinds: Vec<&str> = self.kinds.iter().map(|k| k.as_str()).collect();
        ToolDecl::new_with_outcome(
            self.name,
            &self.full_title(),
            &self.description,
            self.input_schema(kind),
            move |call, args| call::run(Arc::clone(&spec), Arc::clone(&services), call, args),
        )
        .with_output_schema(self.output_schema())
        .with_annotations(self.annotations())
        .with_scope(self.scope)
        .for_kinds(&kinds)
        .with_meta(self.meta())
    }

    /// The generated H2 section of this tool on its group's page.
    pub fn docs_section(&self) -> Generated {
        let kinds: Vec<&str> = self.kinds.iter().map(|k| k.as_str()).collect();
        let flags: Vec<&str> = self.flags.iter().map(|f| f.as_str()).collect();
        let mut body = format!(
            "**{}** · scope `{}` · for {} · flags {}\n\n{}\n\nArguments:\n",
            self.full_title(),
            self.scope,
            kinds.join(", "),
            if flags.is_empty() {
                "none".to_owned()
            } else {
                flags.join(" ")
            },
            self.description
        );
        let verbosity = Param::new("verbosity", self.verbosity());
        for p in self.params.iter().chain(std::iter::once(&verbosity)) {
            let description = p
                .schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            let mut line = format!("- `{}`", p.name);
            if p.required {
                line.push_str(" (required)");
            }
            if p.agent_only {
                line.push_str(" (agent and integration doors)");
            }
            if p.person_only {
                line.push_str(" (person door)");
            }
            line.push_str(&format!(": {description}\n"));
            body.push_str(&line);
        }
        body.push_str("\nResult fields, beside `applied`, `notes`, `docs` and `meta`:\n");
        for (name, schema, always) in &self.output {
            let description = schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            body.push_str(&format!(
                "- `{name}`{}: {description}\n",
                if *always { "" } else { " (some answers)" }
            ));
        }
        Generated {
            page: self.group.page(),
            heading: self.name.to_owned(),
            body,
        }
    }
}
