import Testing

@testable import BoardwalkCLI

/// Tab offers what fits where the cursor is.
@Suite struct ContextCompletionTests {
    let context = ContextCompletion(
        onboardings: ["\"onb_a\"", "\"onb_b\""], elements: { ["goal", "level"] }, lineStarts: [".help", ".tz"])

    @Test func aSourceStartsTheLineAndAStageFollowsAPipe() {
        #expect(context.candidates(before: "", word: "") == ["events", "sessions", "lints", ".help", ".tz"])
        #expect(context.candidates(before: "", word: "se") == ["sessions"])
        // The findings of `lints` are a table: its columns.
        #expect(context.candidates(before: "lints | where ", word: "ex") == ["example_session"])
        #expect(context.candidates(before: "events | ", word: "") == ContextCompletion.stages)
        #expect(context.candidates(before: "events | where kind == \"x\" | ", word: "co") == ["count"])
    }

    @Test func anEventsExpressionOffersEventFieldsAndTheSession() throws {
        let offered = try #require(context.candidates(before: "events | where ", word: ""))
        #expect(offered.contains("screen") && offered.contains("session.") && offered.contains("day("))
        #expect(!offered.contains("completed"))
        #expect(context.candidates(before: "events | where ", word: "session.co") == ["session.completed"])
        #expect(context.candidates(before: "events | where ", word: "session.an") == ["session.answer("])
        let sessions = try #require(context.candidates(before: "sessions | where ", word: ""))
        #expect(sessions.contains("completed") && sessions.contains("answer(") && !sessions.contains("screen"))
        #expect(context.candidates(before: "sessions | count by ", word: "ye") == ["year("])
    }

    @Test func quotesOfferTheValuesTheComparedFieldTakes() {
        #expect(
            context.candidates(before: "sessions | where exit == ", word: "\"c") == ["\"completed\"", "\"closed\""])
        #expect(context.candidates(before: "events | where session.exit != ", word: "\"p") == ["\"paywall\""])
        #expect(context.candidates(before: "events | where kind in [\"close\", ", word: "\"cu") == ["\"custom\""])
        #expect(context.candidates(before: "sessions | where onboarding == ", word: "onb_b") == ["\"onb_b\""])
        #expect(
            context.candidates(before: "events | where input_type == ", word: "") == [
                "\"text\"", "\"email\"", "\"number\"",
            ])
    }

    @Test func answerOffersTheElementIdsOfTheStore() {
        #expect(context.candidates(before: "sessions | count by answer(", word: "") == ["\"goal\")", "\"level\")"])
        #expect(context.candidates(before: "events | where session.answer(", word: "\"l") == ["\"level\")"])
    }

    @Test func afterAReductionTheColumnsAreTheCheckersToKnow() {
        #expect(context.candidates(before: "events | count by name | where ", word: "c") == nil)
        // Inside a string nothing is offered by context.
        #expect(context.candidates(before: "events | where name == \"a b ", word: "") == nil)
    }
}
