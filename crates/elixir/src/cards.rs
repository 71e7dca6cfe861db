//! The card catalogue (SURFACE §2.5 `cards_catalog`, §6.4): its model (cards, rarities,
//! kinds, forms, the in-game level arithmetic, normalizing the API's `/cards` payload, the
//! catalogue's filters) is `elixir_record::cards`, re-exported here. Fetching is `upstream`'s,
//! storing is the store's, and the wire shape is `tools::cards`'.

pub use elixir_record::cards::*;
