//! The web pages' own phrases in English and Polish: one table of `(key, en, pl)` rows that
//! every template reads as `t.<key>`. The names of modes, statuses, categories and decisions
//! are the report's ([`super::report_text`]); the texts of an assignment are its own.

use std::collections::BTreeMap;

use crate::domain::Language;

/// Every phrase of the pages. The Polish is written for Polish players, not word for word.
const TEXTS: &[(&str, &str, &str)] = &[
    // layout
    ("site", "Sidequest", "Sidequest"),
    ("skip", "Skip to content", "Przejdź do treści"),
    ("nav_label", "Main", "Główna nawigacja"),
    ("home", "Home", "Strona główna"),
    ("author_tokens", "Author tokens", "Tokeny autora"),
    ("sign_out", "Sign out", "Wyloguj się"),
    ("signed_in_as", "Signed in as", "Zalogowano jako"),
    ("language", "Language", "Język"),
    // sign in
    ("sign_in", "Sign in", "Zaloguj się"),
    (
        "signin_intro",
        "Sign in with the account your game master created for you.",
        "Zaloguj się na konto, które założył dla ciebie mistrz gry.",
    ),
    ("username", "Username", "Nazwa użytkownika"),
    ("password", "Password", "Hasło"),
    (
        "bad_login",
        "Unknown username or wrong password.",
        "Nieznana nazwa użytkownika albo błędne hasło.",
    ),
    (
        "too_many",
        "Too many failed sign-ins. Try again in 15 minutes.",
        "Zbyt wiele nieudanych prób logowania. Spróbuj ponownie za 15 minut.",
    ),
    (
        "busy",
        "The server is checking many sign-ins at once; try again in a second.",
        "Serwer sprawdza teraz wiele logowań naraz; spróbuj ponownie za chwilę.",
    ),
    ("signed_out", "You are signed out.", "Wylogowano."),
    // home
    ("home_title", "Your campaigns", "Twoje kampanie"),
    (
        "as_gm",
        "Assignments you run",
        "Przydziały, które prowadzisz",
    ),
    (
        "as_player",
        "Assignments you play",
        "Przydziały, w których grasz",
    ),
    ("none_yet", "None yet.", "Na razie nic tu nie ma."),
    ("col_character", "Character", "Postać"),
    ("col_mode", "Mode", "Tryb"),
    ("col_status", "Status", "Stan"),
    ("col_version", "Version", "Wersja"),
    (
        "col_pending",
        "Pending consequences",
        "Oczekujące konsekwencje",
    ),
    ("col_activity", "Last activity", "Ostatnia aktywność"),
    ("scenarios", "Your scenarios", "Twoje scenariusze"),
    ("new_scenario", "New scenario", "Nowy scenariusz"),
    ("scenario_title", "Title", "Tytuł"),
    ("create", "Create", "Utwórz"),
    (
        "published_version",
        "Published version",
        "Opublikowana wersja",
    ),
    (
        "not_published",
        "not published yet",
        "jeszcze nieopublikowany",
    ),
    ("new_assignment", "New assignment", "Nowy przydział"),
    ("open", "Open", "Otwórz"),
    // scenario editor
    ("draft_nodes", "Draft nodes", "Węzły w szkicu"),
    ("node_id", "Node id", "Identyfikator węzła"),
    (
        "node_id_hint",
        "Letters a–z, digits, _ and -, up to 64; it cannot change once saved.",
        "Małe litery a–z, cyfry, _ i -, najwyżej 64 znaki; po zapisaniu nie da się go zmienić.",
    ),
    ("node_kind", "Kind", "Rodzaj"),
    ("kind_scene", "scene", "scena"),
    ("kind_npc", "NPC", "BN"),
    ("kind_item", "item", "przedmiot"),
    ("kind_location", "location", "miejsce"),
    ("kind_note", "note", "notatka"),
    ("node_title", "Title", "Tytuł"),
    ("public_text", "Public text", "Tekst jawny"),
    (
        "public_text_hint",
        "The player's assistant reads it when the node is published and shared in an assignment.",
        "Czyta go asystent gracza, gdy węzeł jest opublikowany i udostępniony w przydziale.",
    ),
    ("gm_text", "GM-only text", "Tekst tylko dla MG"),
    (
        "gm_text_hint",
        "Only you see it; it never reaches a player or their assistant.",
        "Widzisz go tylko ty; nigdy nie trafia do gracza ani do jego asystenta.",
    ),
    (
        "published_flag",
        "Published (may be shared with players)",
        "Opublikowany (można go udostępnić graczom)",
    ),
    ("save_node", "Save the node", "Zapisz węzeł"),
    ("add_node", "Add a node", "Dodaj węzeł"),
    ("edit_node", "Edit", "Edytuj"),
    ("delete", "Delete", "Usuń"),
    ("publish", "Publish a new version", "Opublikuj nową wersję"),
    (
        "publish_hint",
        "Freezes the current draft as the next version; existing assignments keep the version they were made from.",
        "Zamraża obecny szkic jako kolejną wersję; istniejące przydziały zostają przy wersji, z której powstały.",
    ),
    ("versions", "Published versions", "Opublikowane wersje"),
    ("version", "Version", "Wersja"),
    ("view", "View", "Zobacz"),
    ("no_nodes", "No nodes yet.", "Nie ma jeszcze węzłów."),
    ("yes", "yes", "tak"),
    ("no", "no", "nie"),
    ("saved", "Saved.", "Zapisano."),
    ("deleted", "Deleted.", "Usunięto."),
    ("published_ok", "Published.", "Opublikowano."),
    (
        "back_to_scenario",
        "Back to the scenario",
        "Wróć do scenariusza",
    ),
    // new assignment
    (
        "player_username",
        "Player's username",
        "Nazwa użytkownika gracza",
    ),
    (
        "player_username_hint",
        "The account that will play; only you see this field.",
        "Konto osoby, która zagra; to pole widzisz tylko ty.",
    ),
    (
        "assignment_language",
        "Language of the assignment",
        "Język przydziału",
    ),
    ("english", "English", "angielski"),
    ("polish", "Polish", "polski"),
    ("character", "Character", "Postać"),
    ("brief", "Brief", "Zarys"),
    ("instructions", "Instructions", "Instrukcje"),
    ("boundaries", "Boundaries", "Granice"),
    ("return_condition", "Return condition", "Warunek powrotu"),
    ("gm_notes", "GM notes", "Notatki MG"),
    (
        "published_nodes",
        "Published nodes to share",
        "Udostępniane opublikowane węzły",
    ),
    (
        "nodes_hint",
        "Their public text goes to the player's assistant (GM-only text never does). Choose at least one published scene; play starts in the first one. At most 200.",
        "Ich jawny tekst trafia do asystenta gracza (tekst tylko dla MG nigdy). Wybierz co najmniej jedną opublikowaną scenę; gra zaczyna się w pierwszej z nich. Najwyżej 200.",
    ),
    (
        "auto_approve",
        "Approve consequences automatically",
        "Zatwierdzaj konsekwencje automatycznie",
    ),
    (
        "auto_hint",
        "Only you see this setting; every proposed consequence is then approved at once.",
        "To ustawienie widzisz tylko ty; każda zgłoszona konsekwencja zostaje wtedy od razu zatwierdzona.",
    ),
    (
        "vis_all",
        "Seen by the player and the player's assistant.",
        "Widzi to gracz i jego asystent.",
    ),
    (
        "vis_gm",
        "Only you (the GM) see this.",
        "Widzisz to tylko ty (MG).",
    ),
    ("required", "required", "wymagane"),
    ("optional", "optional", "opcjonalne"),
    ("up_to", "Up to", "Najwyżej"),
    ("characters", "characters", "znaków"),
    (
        "create_assignment",
        "Create the assignment",
        "Utwórz przydział",
    ),
    (
        "form_errors",
        "Some fields need attention; each says what is wrong.",
        "Niektóre pola wymagają poprawy; przy każdym jest opis problemu.",
    ),
    ("scenario_version", "Scenario version", "Wersja scenariusza"),
    // assignment page
    ("assignment", "Assignment", "Przydział"),
    ("scenario", "Scenario", "Scenariusz"),
    ("journal", "Journal", "Dziennik"),
    (
        "journal_empty",
        "Nothing played yet.",
        "Jeszcze nic nie rozegrano.",
    ),
    ("entry_turn", "Turn", "Tura"),
    ("entry_finish", "Session finished", "Sesja zakończona"),
    ("entry_review", "GM review", "Przegląd MG"),
    ("entry_gm_note", "GM note", "Notatka MG"),
    ("action", "Player's action", "Akcja gracza"),
    ("narration", "Narration", "Narracja"),
    ("summary", "Summary", "Podsumowanie"),
    ("gm_only", "GM only", "Tylko dla MG"),
    ("earlier", "Earlier entries", "Wcześniejsze wpisy"),
    ("later", "Later entries", "Późniejsze wpisy"),
    ("entries", "Entries", "Wpisy"),
    ("of", "of", "z"),
    ("consequences", "Consequences", "Konsekwencje"),
    ("col_category", "Category", "Kategoria"),
    ("col_description", "Description", "Opis"),
    ("col_decision", "Decision", "Decyzja"),
    ("col_note", "GM note", "Notatka MG"),
    ("col_turn", "Turn", "Tura"),
    (
        "no_consequences",
        "No consequences proposed.",
        "Nie zgłoszono żadnych konsekwencji.",
    ),
    (
        "review_link",
        "Review pending consequences",
        "Przejrzyj oczekujące konsekwencje",
    ),
    ("report_link", "Report", "Raport"),
    ("timeline", "Timeline", "Oś czasu"),
    (
        "timeline_text",
        "The session step by step",
        "Sesja krok po kroku",
    ),
    ("tl_turn", "turn", "tura"),
    (
        "tl_proposed",
        "consequences proposed",
        "zgłoszone konsekwencje",
    ),
    ("tl_finish", "session finished", "sesja zakończona"),
    ("tl_approved", "approved", "zatwierdzone"),
    ("tl_rejected", "rejected", "odrzucone"),
    ("tl_decision", "GM decisions", "decyzje MG"),
    (
        "tl_empty",
        "Nothing has happened yet.",
        "Jeszcze nic się nie wydarzyło.",
    ),
    // token panel
    ("token_panel", "Play token", "Token gry"),
    (
        "token_who",
        "The player and the GM may both generate and revoke it. A token is valid 14 days.",
        "Token może wygenerować i unieważnić zarówno gracz, jak i MG. Token jest ważny 14 dni.",
    ),
    (
        "token_none",
        "There is no live token.",
        "Nie ma aktywnego tokenu.",
    ),
    (
        "token_expires",
        "The current token expires",
        "Obecny token wygasa",
    ),
    ("token_generate", "Generate a token", "Wygeneruj token"),
    (
        "token_rotate",
        "Generate a new token (the current one stops working)",
        "Wygeneruj nowy token (obecny przestanie działać)",
    ),
    ("token_revoke", "Revoke the token", "Unieważnij token"),
    (
        "token_shown_once",
        "Copy it now: it is shown only this once.",
        "Skopiuj go teraz: widać go tylko ten jeden raz.",
    ),
    ("token_label", "Token", "Token"),
    ("copy", "Copy", "Kopiuj"),
    (
        "token_revoked_msg",
        "The token is revoked; the assistant can no longer play with it.",
        "Token unieważniony; asystent nie może już nim grać.",
    ),
    (
        "cfg_intro",
        "Paste one of these into your MCP client:",
        "Wklej jedną z tych konfiguracji do swojego klienta MCP:",
    ),
    (
        "cfg_desktop",
        "Claude Desktop through the mcp-remote bridge (claude_desktop_config.json, Settings → Developer → Edit Config; needs Node.js; restart Claude Desktop)",
        "Claude Desktop przez most mcp-remote (claude_desktop_config.json, Settings → Developer → Edit Config; wymaga Node.js; uruchom Claude Desktop ponownie)",
    ),
    (
        "cfg_code",
        "Claude Code (a terminal command)",
        "Claude Code (polecenie w terminalu)",
    ),
    (
        "cfg_inspector",
        "MCP Inspector 2.x (needs Node.js ≥ 22.19): its CLI mode, or its web UI with the header under Custom Headers",
        "MCP Inspector 2.x (wymaga Node.js ≥ 22.19): tryb CLI albo interfejs WWW z nagłówkiem w Custom Headers",
    ),
    // review
    ("review_title", "Review", "Przegląd"),
    (
        "review_intro",
        "Decide 1 to 20 consequences at a time. Your note (up to 2,000 characters) is visible to the player.",
        "Rozstrzygaj od 1 do 20 konsekwencji naraz. Twoją notatkę (do 2000 znaków) zobaczy gracz.",
    ),
    ("decision_skip", "Not now", "Nie teraz"),
    ("decision_approve", "Approve", "Zatwierdź"),
    ("decision_reject", "Reject", "Odrzuć"),
    ("note", "Note for the player", "Notatka dla gracza"),
    ("submit_review", "Save the decisions", "Zapisz decyzje"),
    (
        "no_pending",
        "Nothing awaits review.",
        "Nic nie czeka na przegląd.",
    ),
    (
        "review_done",
        "Decisions saved. The assignment is now at version",
        "Decyzje zapisane. Przydział ma teraz wersję",
    ),
    (
        "stale_title",
        "The assignment changed",
        "Przydział się zmienił",
    ),
    (
        "stale_intro",
        "Nothing was saved: the assignment moved on after you opened the review. Here is what changed; decide again below.",
        "Nic nie zapisano: po otwarciu przeglądu przydział się zmienił. Oto co się zmieniło; zdecyduj ponownie poniżej.",
    ),
    (
        "stale_seen",
        "You saw version",
        "Formularz był otwarty przy wersji",
    ),
    (
        "stale_now",
        "it is now at version",
        "teraz przydział ma wersję",
    ),
    ("changed_entries", "New in the journal", "Nowe w dzienniku"),
    (
        "decided_meanwhile",
        "Decided in the meantime",
        "Rozstrzygnięte w międzyczasie",
    ),
    (
        "pick_one",
        "Choose approve or reject for at least one consequence (at most 20).",
        "Wybierz zatwierdzenie albo odrzucenie dla co najmniej jednej konsekwencji (najwyżej 20).",
    ),
    (
        "back_to_assignment",
        "Back to the assignment",
        "Wróć do przydziału",
    ),
    // report
    ("report_title", "Report", "Raport"),
    (
        "download_md",
        "Download the report (Markdown)",
        "Pobierz raport (Markdown)",
    ),
    ("report_in", "Report in", "Raport po"),
    ("in_english", "English", "angielsku"),
    ("in_polish", "Polish", "polsku"),
    // author tokens
    (
        "at_intro",
        "Personal tokens for the author door /mcp, so your own MCP client can work as you, the GM. Each is valid 90 days.",
        "Osobiste tokeny do drzwi autora /mcp, dzięki którym twój klient MCP działa w twoim imieniu jako MG. Każdy jest ważny 90 dni.",
    ),
    ("at_name", "Name", "Nazwa"),
    (
        "at_name_hint",
        "To tell your tokens apart, e.g. the client's name; up to 100 characters.",
        "Żeby odróżnić tokeny, np. nazwa klienta; najwyżej 100 znaków.",
    ),
    ("at_create", "Create a token", "Utwórz token"),
    ("at_created", "Created", "Utworzony"),
    ("at_expires", "Expires", "Wygasa"),
    ("at_state", "State", "Stan"),
    ("at_revoked", "revoked", "unieważniony"),
    ("at_live", "live", "aktywny"),
    ("at_expired", "expired", "wygasły"),
    ("at_revoke", "Revoke", "Unieważnij"),
    ("at_none", "No tokens yet.", "Nie masz jeszcze tokenów."),
    (
        "at_revoked_msg",
        "The token is revoked.",
        "Token unieważniony.",
    ),
    // errors
    ("not_found_title", "Not found", "Nie znaleziono"),
    (
        "not_found",
        "There is nothing here, or it is not yours to see.",
        "Nic tu nie ma albo nie masz do tego dostępu.",
    ),
    ("forbidden_title", "Not allowed", "Brak uprawnień"),
    ("csrf_title", "Form refused", "Formularz odrzucony"),
    (
        "csrf",
        "This form expired or came from another site. Go back, reload the page and try again.",
        "Ten formularz wygasł albo pochodzi z innej strony. Wróć, odśwież stronę i spróbuj ponownie.",
    ),
    ("conflict_title", "Conflict", "Konflikt"),
    ("unavailable_title", "Unavailable", "Niedostępne"),
    (
        "unavailable",
        "Sidequest cannot answer just now. Try again in a moment.",
        "Sidequest nie może teraz odpowiedzieć. Spróbuj za chwilę.",
    ),
    ("error_title", "Error", "Błąd"),
    (
        "internal",
        "Something went wrong on our side.",
        "Coś poszło nie tak po naszej stronie.",
    ),
    (
        "back_home",
        "Back to the home page",
        "Wróć na stronę główną",
    ),
    ("invalid_title", "Check the form", "Sprawdź formularz"),
];

/// The phrases of the pages in `language`, by key.
pub fn page_texts(language: Language) -> BTreeMap<&'static str, &'static str> {
    TEXTS
        .iter()
        .map(|(k, en, pl)| {
            (
                *k,
                match language {
                    Language::En => *en,
                    Language::Pl => *pl,
                },
            )
        })
        .collect()
}

/// One phrase; empty if the table lacks the key (templates fail on a missing key instead).
pub fn text(language: Language, key: &str) -> &'static str {
    TEXTS
        .iter()
        .find(|(k, _, _)| *k == key)
        .map_or("", |(_, en, pl)| match language {
            Language::En => en,
            Language::Pl => pl,
        })
}

/// A field message of the services (English) in `language`: the bounds messages every form
/// shows are said in Polish; anything else stays as the service wrote it.
pub fn field_message(language: Language, message: &str) -> String {
    if language == Language::En {
        return message.to_owned();
    }
    if message == "is required and must not be empty" {
        return "to pole jest wymagane i nie może być puste".into();
    }
    if message == "must not be blank" {
        return "nie może składać się z samych odstępów".into();
    }
    if message == "no such user" {
        return "nie ma takiego użytkownika".into();
    }
    if message == "this user is deactivated" {
        return "to konto jest wyłączone".into();
    }
    if message == "must include at least one published scene" {
        return "wybierz co najmniej jedną opublikowaną scenę".into();
    }
    // "has N characters; at most M allowed"
    if let Some(rest) = message.strip_prefix("has ")
        && let Some((n, rest)) = rest.split_once(" characters; at most ")
        && let Some(m) = rest.strip_suffix(" allowed")
    {
        return format!("ma {n} znaków; dozwolone najwyżej {m}");
    }
    message.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_both_languages_are_written() {
        let mut seen = std::collections::BTreeSet::new();
        for (k, en, pl) in TEXTS {
            assert!(seen.insert(*k), "{k} twice");
            assert!(!en.is_empty() && !pl.is_empty(), "{k}");
        }
        assert_eq!(page_texts(Language::Pl)["sign_in"], "Zaloguj się");
        assert_eq!(text(Language::En, "sign_in"), "Sign in");
    }

    #[test]
    fn bounds_messages_are_said_in_polish() {
        assert_eq!(
            field_message(Language::Pl, "has 201 characters; at most 200 allowed"),
            "ma 201 znaków; dozwolone najwyżej 200"
        );
        assert_eq!(
            field_message(Language::En, "has 201 characters; at most 200 allowed"),
            "has 201 characters; at most 200 allowed"
        );
        assert_eq!(
            field_message(Language::Pl, "is required and must not be empty"),
            "to pole jest wymagane i nie może być puste"
        );
        assert_eq!(field_message(Language::Pl, "odd"), "odd");
    }
}
