//! Sidequest's MCP doors on the mcp-door platform: the player door (`/play/mcp`) and the
//! author door (`/mcp`), and what both share (`door`).

pub mod answers;
pub mod author;
mod door;
pub mod player;
pub mod schema;
