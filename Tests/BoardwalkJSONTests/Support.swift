import BoardwalkJSON
import BoardwalkModel
import Foundation
import Testing

/// The arrival time tests hand the reader; events without a time get it.
let arrival = Timestamp(microseconds: 1_793_527_200_000_000)

/// `{"onboarding_id":"o1","screen_cid":"s1","screen_index":1,"total_screens":3}` and its value.
let metaJSON = #"{"onboarding_id":"o1","screen_cid":"s1","screen_index":1,"total_screens":3}"#
let meta = Meta(onboardingID: "o1", screenClientID: "s1", screenIndex: 1, totalScreens: 3)

/// Reads one line with a fresh reader, returning the event or the rendered error.
func readOne(_ line: String, lineNumber: Int = 1) throws -> Result<Event, JSONReadError> {
    let reader = try EventReader()
    return Result { () throws(JSONReadError) -> Event in try reader.read(line, lineNumber: lineNumber, arrival: arrival)
    }
}

/// The text of a fixture file under `Fixtures/`.
func fixture(_ path: String) throws -> String {
    let base = try #require(Bundle.module.resourceURL)
    return try String(contentsOf: base.appendingPathComponent("Fixtures").appendingPathComponent(path), encoding: .utf8)
}

/// A pretty-printed JSON document on one line (the seed examples are multi-line; none has a newline in a string).
func oneLine(_ text: String) -> String {
    text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined()
}
