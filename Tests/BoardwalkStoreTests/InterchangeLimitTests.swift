import BoardwalkCodec
import BoardwalkModel
import Testing

@testable import BoardwalkStore

/// `append` refuses what an NDJSON export could not carry back in (total screens of -5 and 70 000, times in 1969
/// and year 20983, a 5 MB action id: `check()` would pass and `ingest` refuse the exported lines): each such event
/// refuses its batch, named by index, and events at the limits are taken.
@Suite struct InterchangeLimitTests {
    static let big = String(repeating: "x", count: RecordFormat.maxStringBytes + 1)
    static let atLimit = String(repeating: "y", count: RecordFormat.maxStringBytes)

    static func choices(_ n: Int) -> [Choice] { (0..<n).map { Choice(id: "c\($0)", value: "v\($0)", label: "l") } }

    static func refused() -> [(String, (inout Event) -> Void, EncodingError)] {
        [
            ("total screens -5", { $0.meta!.totalScreens = -5 }, EncodingError(.totalScreensOutOfRange(-5))),
            (
                "total screens 70 000", { $0.meta!.totalScreens = 70_000 },
                EncodingError(.totalScreensOutOfRange(70_000))
            ),
            ("a time in 1969", { $0.time = Timestamp(microseconds: -1) }, EncodingError(.timeOutOfRange(-1))),
            ("the largest time", { $0.time = Timestamp(microseconds: .max) }, EncodingError(.timeOutOfRange(.max))),
            (
                "a long action id", { $0.payload = .custom(actionID: big) },
                EncodingError(.stringTooLong(field: "action", bytes: big.utf8.count))
            ),
            (
                "a long profile", { $0.profile = big },
                EncodingError(.stringTooLong(field: "profile", bytes: big.utf8.count))
            ),
            (
                "a long input",
                { $0.payload = .stateUpdated(StateUpdate(elementID: "name", value: .input(.text(big)))) },
                EncodingError(.stringTooLong(field: "value", bytes: big.utf8.count))
            ),
            (
                "1 001 choices",
                { $0.payload = .stateUpdated(StateUpdate(elementID: "m", value: .multiSelect(choices(1_001)))) },
                EncodingError(.tooManyChoices(1_001))
            ),
        ]
    }

    @Test func eventsAnExportCouldNotCarryAreRefused() throws {
        for (name, change, expected) in Self.refused() {
            let dir = temporaryDirectory()
            defer { removeDirectory(dir) }
            let store = try Store.open(at: dir)
            defer { store.close() }
            var batch = (0..<5).map { simpleEvent(onboarding: 0, screen: 0, session: $0, time: 1_000 + Int64($0)) }
            change(&batch[3])
            let error = #expect(throws: StoreError.self, "\(name)") { try store.append(batch) }
            #expect(error?.kind == .invalidArgument, "\(name)")
            #expect(error?.batchIndex == 3, "\(name)")
            #expect((error?.underlying as? EncodingError) == expected, "\(name): \(String(describing: error))")
            #expect(try store.read { try $0.stats().events } == 0, "\(name): nothing of the batch is stored")
            #expect(try store.check().isOK, "\(name)")
        }
    }

    /// A long string already in the dictionary is refused again (a refused event's strings are kept, so a second
    /// append in the same transaction meets the same string no longer new).
    @Test func aLongStringAlreadyInTheDictionaryIsRefusedToo() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        defer { store.close() }
        var a = simpleEvent(onboarding: 0, screen: 0, session: 0, time: 1_000)
        a.profile = Self.big
        var b = simpleEvent(onboarding: 0, screen: 0, session: 1, time: 2_000)
        b.profile = Self.big
        var refusals = 0
        try store.write { w in
            for event in [a, b] {
                do { _ = try w.append([event]) } catch let error as StoreError where error.kind == .invalidArgument {
                    refusals += 1
                }
            }
        }
        #expect(refusals == 2)
        #expect(try store.read { try $0.stats().events } == 0)
    }

    /// Strings within 64 KiB whose NDJSON line would not be: a multi-select of 1 000 choices with
    /// 1.2 KB labels, and three 64 KiB ids of control characters (6 bytes each as JSON).
    @Test func eventsWhoseLineWouldPassOneMiBAreRefused() throws {
        let label = String(repeating: "l", count: 1_200)
        var wide = simpleEvent(onboarding: 0, screen: 0, session: 7, time: 5_000)
        wide.payload = .stateUpdated(
            StateUpdate(
                elementID: "m",
                value: .multiSelect(
                    (0..<1_000).map { Choice(id: "c\($0)", value: "v\($0)", label: "\($0)" + label) })))
        var escaped = simpleEvent(onboarding: 0, screen: 0, session: 8, time: 6_000)
        escaped.profile = String(repeating: "\u{01}", count: RecordFormat.maxStringBytes)
        escaped.placement = String(repeating: "\u{03}", count: RecordFormat.maxStringBytes)
        escaped.payload = .analytics(
            .screenCompleted(elementID: String(repeating: "\u{02}", count: RecordFormat.maxStringBytes), reply: nil))
        for event in [wide, escaped] {
            let dir = temporaryDirectory()
            defer { removeDirectory(dir) }
            let store = try Store.open(at: dir)
            defer { store.close() }
            let error = #expect(throws: StoreError.self) { try store.append([event]) }
            guard case .lineTooLong? = (error?.underlying as? EncodingError)?.reason else {
                Issue.record("not refused for its line: \(String(describing: error))")
                continue
            }
        }
    }

    @Test func eventsAtTheLimitsAreTaken() throws {
        let dir = temporaryDirectory()
        defer { removeDirectory(dir) }
        let store = try Store.open(at: dir)
        defer { store.close() }
        var batch = (0..<6).map { simpleEvent(onboarding: 0, screen: 0, session: $0, time: 1_000 + Int64($0)) }
        batch[0].meta!.totalScreens = Meta.maxScreenIndex + 1
        batch[1].meta!.totalScreens = 0
        batch[2].time = Timestamp.range.upperBound
        batch[3].time = Timestamp.range.lowerBound
        batch[4].payload = .custom(actionID: Self.atLimit)
        batch[5].payload = .stateUpdated(
            StateUpdate(elementID: "m", value: .multiSelect(Self.choices(RecordFormat.maxChoices))))
        #expect(try store.append(batch).appended == 6)
        #expect(try store.check().isOK)
    }
}
