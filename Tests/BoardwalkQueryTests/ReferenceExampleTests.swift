import BoardwalkModel
import Testing

@testable import BoardwalkQuery

/// A small story: three sessions of `onb_1` (4 screens) and one of `onb_2`.
/// - A (variation a): answers pro, picks music+sports, reaches screen 2, opens the paywall.
/// - B (variation b): answers beginner then pro, picks music, jumps to screen 3, completes.
/// - C (variation a): closes on screen 0.
/// - D (onb_2, variation b): one screen, abandoned.
let story: [Event] = [
    ev(0, "A", variation: "a", started), ev(1, "A", variation: "a", presented),
    ev(10, "A", variation: "a", select("experience", "pro")),
    ev(12, "A", variation: "a", .analytics(.screenCompleted(elementID: "next", reply: ""))),
    ev(15, "A", screen: 1, variation: "a", presented),
    ev(20, "A", screen: 1, variation: "a", multi("interests", ["music", "sports"])),
    ev(30, "A", screen: 2, variation: "a", presented),
    ev(40, "A", screen: 2, variation: "a", .openPaywall(actionID: "buy")),
    ev(0, "B", variation: "b", started), ev(2, "B", variation: "b", presented),
    ev(5, "B", variation: "b", select("experience", "beginner")),
    ev(6, "B", variation: "b", select("experience", "pro")),
    ev(8, "B", screen: 1, variation: "b", presented),
    ev(9, "B", screen: 1, variation: "b", multi("interests", ["music"])),
    ev(20, "B", screen: 3, variation: "b", presented), ev(25, "B", screen: 3, variation: "b", completedEvent),
    ev(0, "C", variation: "a", started), ev(3, "C", variation: "a", presented),
    ev(4, "C", variation: "a", .close(actionID: "x")),
    ev(100, "D", total: 1, onboarding: "onb_2", variation: "b", presented),
]

@Test func exampleCountEvents() throws {
    #expect(try run("events | count", story).render(.csv) == "count\n20\n")
}

@Test func exampleCountAnalyticsByName() throws {
    #expect(
        try run(#"events | where kind == "analytics" | count by name"#, story).render(.csv) == """
            name,count
            onboarding_completed,1
            onboarding_started,3
            screen_completed,1
            screen_presented,8

            """)
}

@Test func exampleOneOnboardingFromScreenAndTime() throws {
    let q = #"events | where onboarding == "onb_1" and screen >= 2 and time >= @2026-11-01 | count by screen, name"#
    #expect(
        try run(q, story).render(.csv) == """
            screen,name,count
            2,open_paywall,1
            2,screen_presented,1
            3,onboarding_completed,1
            3,screen_presented,1

            """)
}

@Test func exampleCountSessions() throws {
    #expect(try run("sessions | count", story).render(.csv) == "count\n4\n")
}

@Test func exampleScreenFunnel() throws {
    // Reached 0: A B C; 1: A B; 2: A B (B jumped to 3, its furthest is 3); 3: B.
    // Median time from session start: step 1 → A 15 s, B 8 s → 11.5 s; step 2 → A 30 s, B 20 s → 25 s.
    #expect(
        try run(#"sessions | where onboarding == "onb_1" | funnel"#, story).render(.csv) == """
            step,screen_cid,sessions,pct_of_first,pct_of_previous,dropoff,median_time
            0,s0,3,100,100,0,0
            1,s1,2,66.66666666666667,66.66666666666667,1,11.5
            2,s2,2,66.66666666666667,100,0,25
            3,s3,1,33.333333333333336,50,1,20

            """)
}

@Test func exampleCustomFunnelWithin() throws {
    let q =
        #"sessions | where onboarding == "onb_1" | funnel screen_presented(screen == 0), screen_completed(screen == 2), open_paywall within 30m"#
    // Nobody completes screen 2 (A completes screen 0 only), so only step 1 is reached.
    #expect(
        try run(q, story).render(.csv) == """
            step,name,sessions,pct_of_first,pct_of_previous,dropoff,mean_time,median_time,p90_time
            1,screen_presented(screen == 0),3,100,100,0,0,0,0
            2,screen_completed(screen == 2),0,0,0,3,,,
            3,open_paywall,0,0,,0,,,

            """)
    let reached =
        #"sessions | where onboarding == "onb_1" | funnel screen_presented(screen == 0), screen_completed(screen == 0), open_paywall within 30m"#
    #expect(try run(reached, story).column("sessions") == [.integer(3), .integer(1), .integer(1)])
    #expect(
        try run(reached, story).column("median_time") == [
            .duration(0), .duration(11 * Double(second)), .duration(39 * Double(second)),
        ])
}

@Test func exampleCountCompletedByAnswer() throws {
    #expect(
        try run(#"sessions | where completed | count by answer("experience")"#, story).render(.csv) == """
            "answer(""experience"")",count
            pro,1

            """)
}

@Test func exampleStatsByOnboarding() throws {
    // onb_1 durations 40 s, 25 s, 4 s: p50 25 s, p90 = 25 + 0.8·15 = 37 s. onb_2: one event, 0 s.
    #expect(
        try run("sessions | stats count(), rate(completed), p50(duration), p90(duration) by onboarding", story).render(
            .table) == """
                onboarding  count()  rate(completed)  p50(duration)  p90(duration)
                ----------  -------  ---------------  -------------  -------------
                onb_1             3           0.3333            25s            37s
                onb_2             1                0             0s             0s

                """)
}

@Test func exampleDwellByScreen() throws {
    // Screen 0: A 1→15 = 14 s, B 2→8 = 6 s, C 3→4 (close) = 1 s. Screen 1: A 15 s, B 12 s. Screen 2: A 10 s (paywall).
    // Screen 3: B 5 s (completed). D's only screen is censored.
    #expect(
        try run(#"events | where name == "screen_presented" | stats p50(dwell), p90(dwell) by screen"#, story).render(
            .csv) == """
                screen,p50(dwell),p90(dwell),censored
                0,6,12.4,1
                1,13.5,14.7,0
                2,10,10,0
                3,5,5,0

                """)
}

@Test func exampleTopValues() throws {
    #expect(
        try run(#"events | where element == "interests" | top 10 value"#, story).render(.csv)
            == "value,count\nmusic,2\nsports,1\n")
}

@Test func exampleCountByExit() throws {
    #expect(
        try run("sessions | count by exit", story).render(.csv)
            == "exit,count\nabandoned,1\nclosed,1\ncompleted,1\npaywall,1\n")
}

@Test func exampleAnswerAndDid() throws {
    #expect(
        try run(#"sessions | where answer("experience") == "pro" and did(open_paywall) | count"#, story).render(.csv)
            == "count\n1\n")
}
