//! How Elixir speaks MCP on top of mcp-door, between access and the tools. The request path
//! is one file, [`call`]: a tool call from its handler's context to the rendered result (the
//! handler's context and failures, the call's run with refunds, the response envelope and the
//! `meta` every answer carries). Declared at start-up: the tool-spec framework ([`spec`]: one
//! declaration per tool, its schemas and docs section), argument reading ([`args`]) and the
//! shared argument blocks of SURFACE §2.1 ([`blocks`]), compact output-schema entries
//! ([`shape`]), resources and prompts ([`resources`]) and the door [`presenter`]. After the
//! answer: the audit hook ([`audit`], queued through [`audit_writer`]). The tools themselves
//! are `tools`'.

pub mod args;
pub mod audit;
pub mod audit_writer;
pub mod blocks;
pub mod call;
pub mod presenter;
pub mod resources;
pub mod shape;
pub mod spec;
