import BoardwalkCodec
import BoardwalkModel
import Testing
@testable import BoardwalkStore

/// `append` refuses what an NDJSON export could not carry back in (QA, session 8: the store took total screens of
/// -5 and 70 000, times in 1969 and year 20983 and a 5 MB action id, `check()` passed, and `ingest` refused the
/// exported lines): each such event refuses its batch, named by index, and events at the limits are taken.
@Suite struct InterchangeLimitTests {
    static let big = String(repeating: "x", count: RecordFormat.maxStringBytes + 1)
    static let atLimit = String(repeating: "y", count: RecordFormat.maxStringBytes)

    static func choices(_ n: Int) -> [Choice] { (0..<n).map { Choice(id: "c\($0)", value: "v\($0)", label: "l") } }

    static func refused() -> [(String, (inout Event) -> Void, EncodingError)] {
        [
            ("total screens -5", { $0.meta!.totalScreens = -5 }, EncodingError(.totalScreensOutOfRange(-5))),
            ("total screens 70 000", { $0.meta!.totalScreens = 70_000 }, EncodingError(.totalScreensOutOfRange(70_000))),
            ("a time in 1969", { $0.time = Timestamp(microseconds: -1) }, EncodingError(.timeOutOfRange(-1))),
            ("the largest time", { $0.time = Timestamp(microseconds: .max) }, EncodingError(.timeOutOfRange(.max))),
            ("a long action id", { $0.payload = .custom(actionID: big) },
             EncodingError(.stringTooLong(field: "action", bytes: big.utf8.count))),
            ("a long profile", { $0.profile = big }, EncodingError(.stringTooLong(field: "profile", bytes: big.utf8.count))),
            ("a long input", { $0.payload = .stateUpdated(StateUpdate(elementID: "name", value: .input(.text(big)))) },
             EncodingError(.stringTooLong(field: "value", bytes: big.utf8.count))),
            ("1 001 choices", { $0.payload = .stateUpdated(StateUpdate(elementID: "m", value: .multiSelect(choices(1_001)))) },
             EncodingError(.tooManyChoices(1_001))),
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
        batch[5].payload = .stateUpdated(StateUpdate(elementID: "m", value: .multiSelect(Self.choices(RecordFormat.maxChoices))))
        #expect(try store.append(batch).appended == 6)
        #expect(try store.check().isOK)
    }
}
