//! `teammem mcp` through the official MCP SDK: tools, ages, the live index, pending saves.

mod ages;
mod door;
mod live;
mod pending;
mod tools;
