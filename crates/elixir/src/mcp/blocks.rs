//! The shared argument blocks of SURFACE §2.1 (next: PLAYER, CLAN, WINDOW, SEASON, MODE, CARD).
