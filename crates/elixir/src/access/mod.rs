//! Who is calling and how much they may do, the first stretch of a request's path after the
//! door. The request path is one file, [`gate`]: bearer → principal (the door's
//! `Authenticator`, with OAuth verification over mcp-oauth) and the hourly rate and daily quota
//! (its `MethodGate`), plus the refund a failing call makes. Beside it, free of I/O: the
//! principal [`kinds`] (tiers, scopes, service keys, public ids), the one [`door_path`]
//! grammar, what a refusal is counted under ([`refusals`]) and metering's windows and
//! extension types ([`metering`]). Off the request path: refunds settled after the answer
//! ([`refunds`]) and the mcp-oauth glue ([`oauth`]: the authorization server's configuration,
//! the resource directory, Elixir's accounts, the purge). What a tool does is `tools`'.

pub mod door_path;
pub mod gate;
pub mod kinds;
pub mod metering;
pub mod oauth;
pub mod refunds;
pub mod refusals;
