//! Checks of a product's command line: that a subcommand's flags are named by the environment
//! variables its docs promise. Parsing and the flags themselves are the products' (and
//! mcp-door's shared `serve` flags).

/// Asserts that `command` is well formed and that its subcommand `sub` has each `(--flag,
/// ENV)` of `expected`: a flag of that long name whose environment variable is `ENV`.
pub fn assert_flag_envs(command: &clap::Command, sub: &str, expected: &[(&str, &str)]) {
    command.clone().debug_assert();
    let sub = command
        .find_subcommand(sub)
        .unwrap_or_else(|| panic!("no subcommand {sub}"));
    for (flag, env) in expected {
        let arg = sub
            .get_arguments()
            .find(|a| a.get_long() == Some(flag))
            .unwrap_or_else(|| panic!("no --{flag}"));
        assert_eq!(arg.get_env(), Some(std::ffi::OsStr::new(env)), "--{flag}");
    }
}
