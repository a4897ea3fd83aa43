import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Testing

@testable import BoardwalkStore

/// The encoder's `emptyIsAbsent`, which the append loop uses instead of normalizing events itself, writes exactly
/// the record of `Store.normalized(event)` (semantics rule 11).
@Suite struct EmptyIsAbsentTests {
    @Test(arguments: [false, true])
    func encodesTheNormalizedEvent(passEventID: Bool) throws {
        var events = RandomEvents(seed: passEventID ? 11 : 12)
        var direct = RecordEncoder(), normalized = RecordEncoder()
        var directStrings = StringTable(), normalizedStrings = StringTable()
        var changed = 0
        var rng = SplitMix64(seed: 5)
        for _ in 0..<5_000 {
            var event = events.event()
            // More screen_completed events, with empty element ids and replies among them.
            if event.kind == .analytics && rng.next() % 2 == 0 {
                let choices: [String?] = ["", "next", nil]
                event.payload = .analytics(
                    .screenCompleted(elementID: choices[Int(rng.next() % 3)], reply: choices[Int(rng.next() % 3)]))
            }
            var fixed = Store.normalized(event)
            if fixed != event { changed += 1 }
            // The reference the store passes: made from the id when it is present and not empty.
            var ref: EventIDRef? = nil
            if passEventID, let id = event.eventID, !id.isEmpty {
                ref = try EventIDRef(interning: id, strings: &directStrings)
            }
            var refAgain: EventIDRef? = nil
            if passEventID, let id = fixed.eventID {
                refAgain = try EventIDRef(interning: id, strings: &normalizedStrings)
            }
            direct.removeAll()
            normalized.removeAll()
            let a: EncodedRecord, b: EncodedRecord
            do {
                a = try withUnsafePointer(to: &event) {
                    try direct.appendBody(at: $0, strings: &directStrings, eventID: ref, emptyIsAbsent: true)
                }
            } catch {
                // The same refusal either way (a screen index out of range).
                #expect(throws: EncodingError.self) { try normalized.appendBody(fixed, strings: &normalizedStrings) }
                continue
            }
            b = try withUnsafePointer(to: &fixed) {
                try normalized.appendBody(at: $0, strings: &normalizedStrings, eventID: refAgain)
            }
            #expect(a.header == b.header)
            #expect(a.session == b.session)
            #expect(direct.bytes == normalized.bytes)
        }
        #expect(changed > 500)
        #expect(directStrings.strings == normalizedStrings.strings)
    }
}
