//! How Elixir speaks MCP on top of mcp-door, between access and the tools: the tool-spec
//! framework ([`spec`]: one declaration per tool, its handler's context and failures, the
//! call's run with `meta`, rendering, refunds), argument reading ([`args`]) and the shared
//! argument blocks of SURFACE §2.1 ([`blocks`]), compact output-schema entries ([`shape`]), the response [`envelope`], the `meta` every
//! answer carries ([`meta`]), resources and prompts ([`resources`]), the audit hook
//! ([`audit`], queued through [`audit_writer`]) and the door [`presenter`]. The tools
//! themselves are `tools`'.

pub mod args;
pub mod audit;
pub mod audit_writer;
pub mod blocks;
pub mod envelope;
pub mod meta;
pub mod presenter;
pub mod resources;
pub mod shape;
pub mod spec;
