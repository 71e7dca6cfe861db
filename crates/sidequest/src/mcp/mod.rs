//! Sidequest's MCP doors on the mcp-door platform: the player door (`/play/mcp`) and the
//! author door (`/mcp`).

pub mod answers;
pub mod author;
pub mod player;
pub mod schema;
