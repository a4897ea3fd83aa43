import BoardwalkCodec
import BoardwalkModel
import Testing

/// One event of every kind and value type, with its encoding checked in: if any of these bytes change, the
/// format changed, and `docs/codec.md`, the format version and every stored record must be considered.
struct Golden: CustomTestStringConvertible, Sendable {
    var name: String
    var event: Event
    /// The full record, encoded with a fresh ``StringTable`` (ids in first-use order).
    var record: String
    /// The body, encoded with a fresh table.
    var body: String

    var testDescription: String { name }

    static let onboarding = "3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f"
    static let session = "9b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
    static let t = Timestamp(microseconds: 1_793_527_200_123_456)  // 2026-11-01T10:00:00.123456Z

    static func meta(_ screen: Int = 2, _ cid: String = "goal") -> Meta {
        Meta(onboardingID: onboarding, screenClientID: cid, screenIndex: screen, totalScreens: 8)
    }

    static func event(_ payload: Payload, meta: Meta? = Golden.meta()) -> Event {
        Event(time: t, session: session, meta: meta, payload: payload)
    }

    static let all: [Golden] = [
        Golden(
            name: "analytics onboarding_started, every envelope field, UUID event id",
            event: Event(
                time: t, session: session, profile: "profile_1", eventID: "0f8e7d6c-5b4a-4938-8271-605f4e3d2c1b",
                placement: "main", variation: "b", meta: meta(0, "welcome"), payload: .analytics(.onboardingStarted)),
            record: "23207b408aa817345f06000000011002030f8e7d6c5b4a49388271605f4e3d2c1b040500",
            body: "207b011002030f8e7d6c5b4a49388271605f4e3d2c1b040500"),
        Golden(
            name: "analytics screen_presented", event: event(.analytics(.screenPresented)),
            record: "102041408aa817345f0600000201100201", body: "204101100201"),
        Golden(
            name: "analytics screen_completed with element and reply",
            event: event(.analytics(.screenCompleted(elementID: "continue", reply: "yes"))),
            record: "122041408aa817345f06000002011002320304", body: "2041011002320304"),
        Golden(
            name: "analytics screen_completed bare",
            event: event(.analytics(.screenCompleted(elementID: nil, reply: nil))),
            record: "102041408aa817345f0600000201100202", body: "204101100202"),
        Golden(
            name: "analytics unknown name", event: event(.analytics(.unknown(name: "navigation_failed"))),
            record: "112041408aa817345f060000020110020f03",
            body: "20410110020f03"),
        Golden(
            name: "analytics onboarding_completed",
            event: event(.analytics(.onboardingCompleted), meta: meta(7, "final")),
            record: "102041408aa817345f0600000701100207", body: "204101100207"),
        Golden(
            name: "state select",
            event: event(
                .stateUpdated(
                    StateUpdate(
                        elementID: "goal", value: .select(Choice(id: "fit", value: "stay_fit", label: "Stay fit"))))),
            record: "142141408aa817345f060000020110020100030405", body: "21410110020100030405"),
        Golden(
            name: "state multi_select",
            event: event(
                .stateUpdated(
                    StateUpdate(
                        elementID: "interests",
                        value: .multiSelect([
                            Choice(id: "m", value: "music", label: "Music"),
                            Choice(id: "s", value: "sports", label: "Sports"),
                        ])))),
            record: "182141408aa817345f06000002011002030102040506070809", body: "2141011002030102040506070809"),
        Golden(
            name: "state multi_select empty",
            event: event(.stateUpdated(StateUpdate(elementID: "interests", value: .multiSelect([])))),
            record: "122141408aa817345f06000002011002030100", body: "2141011002030100"),
        Golden(
            name: "state input text",
            event: event(.stateUpdated(StateUpdate(elementID: "name", value: .input(.text("Ann"))))),
            record: "122141408aa817345f06000002011002030204", body: "2141011002030204"),
        Golden(
            name: "state input email",
            event: event(.stateUpdated(StateUpdate(elementID: "email", value: .input(.email("a@b.co"))))),
            record: "122141408aa817345f06000002011002030304",
            body: "2141011002030304"),
        Golden(
            name: "state input number",
            event: event(.stateUpdated(StateUpdate(elementID: "age", value: .input(.number(25))))),
            record: "192141408aa817345f0600000201100203040000000000003940", body: "214101100203040000000000003940"),
        Golden(
            name: "state date_picker year only",
            event: event(.stateUpdated(StateUpdate(elementID: "born", value: .datePicker(DateParts(year: 1995))))),
            record: "132141408aa817345f060000020110020315961f", body: "21410110020315961f"),
        Golden(
            name: "state date_picker full",
            event: event(
                .stateUpdated(
                    StateUpdate(elementID: "born", value: .datePicker(DateParts(year: 1995, month: 7, day: 31))))),
            record: "152141408aa817345f060000020110020375961f0e3e", body: "21410110020375961f0e3e"),
        Golden(
            name: "open_paywall empty action", event: event(.openPaywall(actionID: "")),
            record: "102241408aa817345f0600000201100203", body: "224101100203"),
        Golden(
            name: "custom", event: event(.custom(actionID: "contact_support")),
            record: "102341408aa817345f0600000201100203", body: "234101100203"),
        Golden(
            name: "close", event: event(.close(actionID: "close")), record: "102441408aa817345f0600000201100203",
            body: "244101100203"),
        Golden(
            name: "onboarding_loaded, nothing optional",
            event: Event(time: t, meta: meta(0, "welcome"), payload: .onboardingLoaded),
            record: "0e2540408aa817345f060000000110", body: "25400110"),
        Golden(
            name: "error without meta, upper-case UUID event id",
            event: Event(
                time: t, eventID: "0F8E7D6C-5B4A-4938-8271-605F4E3D2C1B", meta: nil,
                payload: .error(OnboardingError(domain: "AdaptyUIError", code: 4200, message: "webKit"))),
            record: "1e260c408aa817345f06000f8e7d6c5b4a49388271605f4e3d2c1b00d04101",
            body: "260c0f8e7d6c5b4a49388271605f4e3d2c1b00d04101"),
        Golden(
            name: "error with meta, negative code, non-UUID event id",
            event: Event(
                time: Timestamp(microseconds: 0), eventID: "evt-1", meta: meta(),
                payload: .error(OnboardingError(domain: "http", code: -1, message: ""))),
            record: "12264400000000000000000002011002030104", body: "2644011002030104"),
    ]
}

@Suite struct GoldenTests {
    static func encode(_ event: Event, body: Bool) throws -> (bytes: [UInt8], strings: [String], record: EncodedRecord)
    {
        var strings = StringTable()
        var encoder = RecordEncoder()
        let record =
            body ? try encoder.appendBody(event, strings: &strings) : try encoder.appendRecord(event, strings: &strings)
        return (encoder.bytes, strings.strings, record)
    }

    @Test(arguments: Golden.all)
    func recordBytesAreStable(golden: Golden) throws {
        let (bytes, strings, _) = try Self.encode(golden.event, body: false)
        #expect(Hex.encode(bytes) == golden.record, "record of \(golden.name)")
        let decoded = try Hex.decode(golden.record).withUnsafeBytes { try Event(record: $0, strings: strings) }
        #expect(decoded == golden.event)
    }

    @Test(arguments: Golden.all)
    func bodyBytesAreStable(golden: Golden) throws {
        let (bytes, strings, record) = try Self.encode(golden.event, body: true)
        #expect(Hex.encode(bytes) == golden.body, "body of \(golden.name)")
        let decoded = try Hex.decode(golden.body).withUnsafeBytes {
            try Event(body: $0, header: record.header, strings: strings)
        }
        #expect(decoded == golden.event)
    }
}

@Suite struct GoldenBatchTests {
    static let events = [
        Event(
            time: Golden.t, session: Golden.session, meta: Golden.meta(0, "welcome"),
            payload: .analytics(.screenPresented)),
        Event(time: Golden.t, session: Golden.session, meta: Golden.meta(0, "welcome"), payload: .close(actionID: "x")),
    ]

    @Test func batchFileBytesAreStable() throws {
        var writer = BatchWriter()
        for event in Self.events { try writer.append(event) }
        let file = writer.finish()
        #expect(Hex.encode(file) == Self.expected)
        #expect(try BatchReader.events(in: Hex.decode(Self.expected)) == Self.events)
    }

    /// Header; a strings block (onboarding id, "welcome", session id, "x"); a records block of two; the end block.
    static let expected =
        "8942574b0d0a1a0a01000000"
        + "0154000000040000008309759e"
        + "2433663261396331652d376234642d346538612d396332662d316132623363346435653666"
        + "0777656c636f6d65"
        + "2439623163326433652d346635302d343631372d383239332d613462356336643765386639"
        + "0178"
        + "0222000000020000002ad0ff7e"
        + "102041408aa817345f0600000001100201"
        + "102441408aa817345f0600000001100203"
        + "030200000000000000da485e2a0402"

    /// References of two bytes (ids 128 and up), in every field that holds one.
    @Test func twoByteReferences() throws {
        var strings = StringTable(strings: (0..<200).map { "filler\($0)" })
        var encoder = RecordEncoder()
        let event = Event(
            time: Golden.t, session: "s", profile: "p", eventID: "e", placement: "pl", variation: "v",
            meta: Golden.meta(),
            payload: .stateUpdated(
                StateUpdate(elementID: "el", value: .multiSelect([Choice(id: "i", value: "va", label: "l")]))))
        try encoder.appendRecord(event, strings: &strings)
        #expect(Hex.encode(encoder.bytes) == Self.twoByteRecord)
        let decoded = try encoder.bytes.withUnsafeBytes { try Event(record: $0, strings: strings) }
        #expect(decoded == event)
    }

    static let twoByteRecord = "242177408aa817345f0600c80102c90110ca01cb01cc01cd01ce01cf010101d001d101d201"
}
