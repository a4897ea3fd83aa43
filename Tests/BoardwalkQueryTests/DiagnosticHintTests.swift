import Testing

@testable import BoardwalkQuery

// Diagnostics of characters that would print raw, habits from SQL, and typos in quoted event names that would
// silently match nothing. Rendered verbatim, as in DiagnosticSnapshotTests.

@Test func aControlCharacterIsNamedByItsCodePoint() {
    #expect(
        diagnostic("events | \u{0} count") == """
            error: unexpected character U+0000
             --> query:1:10
            1 | events | ␀ count
              |          ^ a control character
            """)
    // An escape sequence would act on the terminal: neither the message nor the source line holds ESC.
    let escape = diagnostic("events | \u{1B}[31m count")
    #expect(
        escape == """
            error: unexpected character U+001B
             --> query:1:10
            1 | events | ␛[31m count
              |          ^ a control character
            """)
    #expect(!escape.unicodeScalars.contains("\u{1B}"))
    // A no-break space looks like a space.
    #expect(
        diagnostic("events |\u{A0}count") == """
            error: unexpected character U+00A0
             --> query:1:9
            1 | events |\u{A0}count
              |         ^ a space other than U+0020; type a plain space
            """)
    #expect(
        diagnostic("events | \u{202E}count") == """
            error: unexpected character U+202E
             --> query:1:10
            1 | events | �count
              |          ^ an invisible formatting character
            """)
}

@Test func controlCharactersInStringsAreEscapedInMessagesAndSourceLines() {
    // The string's control character reaches the message through the value; the caret stays under `"`.
    #expect(
        diagnostic("sessions | where exit == \"clo\u{1B}sed\" or bogus") == #"""
            error: unknown exit `clo\u{1b}sed`; did you mean `closed`?
             --> query:1:26
            1 | sessions | where exit == "clo␛sed" or bogus
              |                          ^^^^^^^^^ one of: completed, paywall, closed, error, abandoned
            """#)
}

@Test func sqlHabitsGetHints() {
    #expect(
        diagnostic("events | where screen <> 2 | count") == """
            error: unexpected `<>`
             --> query:1:23
            1 | events | where screen <> 2 | count
              |                       ^^ use `!=` to compare
            """)
    #expect(
        diagnostic("events | stats count(*)") == """
            error: `count(*)`: there is no `*` argument
             --> query:1:22
            1 | events | stats count(*)
              |                      ^ `count()` counts rows; write `count()`
            """)
    #expect(
        diagnostic("events | count(*)") == """
            error: the `count` stage takes no parentheses
             --> query:1:15
            1 | events | count(*)
              |               ^ write `| count` (or `| count by …`); in `stats`, `count()`
            """)
    #expect(
        diagnostic("events | count by name | where count(*) > 2") == """
            error: `count(*)`: there is no `*` argument
             --> query:1:38
            1 | events | count by name | where count(*) > 2
              |                                      ^ `count()` counts rows; write `count()`
            """)
    #expect(diagnostic("events | stats sum(*)").hasPrefix("error: `sum(*)`: there is no `*` argument\n"))
    // `<` then `>` apart, and `< >`-free comparisons, are untouched.
    #expect(diagnostic("events | where screen < 2 | count") == "no error")
    #expect(diagnostic("events | where screen <= 2 and screen >= 0 | count") == "no error")
}

/// A reduction may follow another: it reads the rows of the one before, so its fields are their columns, and a
/// name that is not one of them is reported with the columns there are.
@Test func aSecondReductionReadsTheColumnsOfTheFirst() {
    #expect(diagnostic("events | stats count() | count") == "no error")
    #expect(diagnostic("events | top 3 name | histogram count") == "no error")
    #expect(diagnostic("events | sort time | limit 5 | count") == "no error")
    #expect(
        diagnostic("sessions | count by profile | stats p50(cnt)") == """
            error: unknown column `cnt`; did you mean `count`?
             --> query:1:41
            1 | sessions | count by profile | stats p50(cnt)
              |                                         ^^^ columns: profile, count
            """)
    #expect(
        diagnostic("sessions | count by profile | histogram profile") == """
            error: `histogram` needs a number or a duration; this is a string
             --> query:1:41
            1 | sessions | count by profile | histogram profile
              |                                         ^^^^^^^
            """)
}

/// A quoted funnel step, `did("…")` or ignored name close to a known event gets the note `name == "…"` gets:
/// the query runs as written, but the likely typo is pointed at rather than matching nothing, silently.
@Test func quotedEventNamesCloseToKnownOnesGetNotes() throws {
    let funnel = try Query.parse(#"sessions | funnel "screen_presnted", close mode strict ignoring ("state_updatd")"#)
    #expect(
        funnel.notes.map(\.description) == [
            """
            note: no known event is named `screen_presnted`; did you mean `screen_presented`?
             --> query:1:19
            1 | sessions | funnel "screen_presnted", close mode strict ignoring ("state_updatd")
              |                   ^^^^^^^^^^^^^^^^^ other names are matched as written
            """,
            """
            note: no known event is named `state_updatd`; did you mean `state_updated`?
             --> query:1:66
            1 | sessions | funnel "screen_presnted", close mode strict ignoring ("state_updatd")
              |                                                                  ^^^^^^^^^^^^^^ other names are matched as written
            """,
        ])
    let did = try Query.parse(#"sessions | where did("screen_presnted") | count"#)
    #expect(
        did.notes.map(\.description) == [
            """
            note: no known event is named `screen_presnted`; did you mean `screen_presented`?
             --> query:1:22
            1 | sessions | where did("screen_presnted") | count
              |                      ^^^^^^^^^^^^^^^^^ other names are matched as written
            """
        ])
    // The query still runs as written: the misspelt step matches nothing.
    let events = [ev(0, "a", screen: 0, presented), ev(1, "a", screen: 0, .close(actionID: ""))]
    #expect(try funnel.run(on: InMemoryEventSource(events)).column("sessions") == [.integer(0), .integer(0)])
    // Known names, and unknown ones far from every known name, get no note.
    for text in [
        #"sessions | funnel "screen_presented", "navigation_failed" | limit 1"#,
        #"sessions | where did("screen_presented") or did("navigation_failed") | count"#,
        #"sessions | funnel onboarding_started, "navigation_failed" mode strict ignoring ("navigation_failed")"#,
    ] {
        #expect(try Query.parse(text).notes.isEmpty, "\(text)")
    }
}
