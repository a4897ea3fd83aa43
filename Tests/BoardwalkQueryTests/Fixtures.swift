import BoardwalkModel
import BoardwalkStore

@testable import BoardwalkQuery

/// 2026-11-01T10:00:00Z, the base of hand-written sessions.
let base: Int64 = 1_793_527_200_000_000
let second: Int64 = 1_000_000
let minute: Int64 = 60 * second

/// A compact event builder for hand-written sessions: `at` is seconds after ``base``.
func ev(
    _ at: Double, _ session: String?, screen: Int? = 0, total: Int = 4, onboarding: String = "onb_1",
    profile: String? = nil, variation: String? = nil, _ payload: Payload
) -> Event {
    Event(
        time: Timestamp(microseconds: base + Int64(at * 1_000_000)), session: session, profile: profile,
        variation: variation,
        meta: screen.map {
            Meta(onboardingID: onboarding, screenClientID: "s\($0)", screenIndex: $0, totalScreens: total)
        },
        payload: payload)
}

let presented = Payload.analytics(.screenPresented)
let started = Payload.analytics(.onboardingStarted)
let completedEvent = Payload.analytics(.onboardingCompleted)
func select(_ element: String, _ value: String) -> Payload {
    .stateUpdated(
        StateUpdate(elementID: element, value: .select(Choice(id: value, value: value, label: value.uppercased()))))
}
func multi(_ element: String, _ values: [String]) -> Payload {
    .stateUpdated(
        StateUpdate(elementID: element, value: .multiSelect(values.map { Choice(id: $0, value: $0, label: $0) })))
}

/// Runs a query with a fixed `now` and returns the table.
func run(_ text: String, _ events: [Event], now: Int64 = base + 86_400 * second) throws -> ResultTable {
    try Query.parse(text).run(on: InMemoryEventSource(events), options: .init(now: Timestamp(microseconds: now)))
}

/// The parse or type error of a query, rendered.
func diagnostic(_ text: String) -> String {
    do {
        _ = try Query.parse(text)
        return "no error"
    } catch {
        return error.description
    }
}

/// Appends `events` to `store` in three batches in arrival order: a batch whose events of a group come before that
/// group's newest block opens a new block overlapping it in time, and a later one grows it.
func appendInThreeBatches(_ events: [Event], to store: Store) throws {
    let cuts = [0, events.count / 3, 2 * events.count / 3, events.count]
    for i in 0..<3 where cuts[i] < cuts[i + 1] { _ = try store.append(Array(events[cuts[i]..<cuts[i + 1]])) }
}
