import BoardwalkModel
import Testing
@testable import BoardwalkQuery

@Test func smoke() throws {
    let events = [
        ev(0, "a", started), ev(1, "a", presented), ev(5, "a", screen: 1, presented), ev(9, "a", screen: 1, .openPaywall(actionID: "p")),
        ev(0, "b", started), ev(2, "b", presented), ev(3, "b", select("experience", "pro")),
    ]
    for q in ["events | count", "events | count by name", "sessions | funnel", "sessions | count by exit",
              "sessions | stats count(), rate(completed), p50(duration), p90(duration) by onboarding",
              "events | where name == \"screen_presented\" | stats p50(dwell), p90(dwell) by screen",
              "sessions | where onboarding == \"onb_1\" | funnel screen_presented(screen == 0), screen_presented(screen == 1), open_paywall within 30m",
              "sessions | where onboarding == \"onb_1\" | explain"] {
        print(q)
        print(try run(q, events).render(.table))
    }
}
