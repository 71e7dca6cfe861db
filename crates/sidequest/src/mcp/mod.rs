//! Sidequest's MCP doors on the mcp-door platform: the player door (`/play/mcp`).

pub mod player;
