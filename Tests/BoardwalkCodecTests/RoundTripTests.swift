import BoardwalkCodec
import BoardwalkGenerator
import BoardwalkModel
import Testing

@Suite struct RoundTripTests {
    static let seeds: [UInt64] = [1, 2, 3, 42, 0xDEAD_BEEF]

    /// Full records: encode with a fresh table, decode each record as a view and as an owned event.
    @Test(arguments: seeds)
    func fullRecordsRoundTrip(seed: UInt64) throws {
        var generator = RandomEvents(seed: seed)
        let events = (0..<1000).map { _ in generator.event() }
        var strings = StringTable()
        var encoder = RecordEncoder()
        var ranges: [Range<Int>] = []
        for event in events { ranges.append(try encoder.appendRecord(event, strings: &strings).range) }
        let bytes = Array(encoder.bytes)
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            for (i, event) in events.enumerated() {
                let view = try RecordView(record: raw, at: offset, stringLimit: StringID(strings.count))
                #expect(view.offset == ranges[i].lowerBound)
                #expect(view.byteCount == ranges[i].count)
                let decoded = try view.event(strings: strings.strings)
                #expect(decoded == event)
                try ViewChecks.expectViewAgrees(view, with: event, strings: strings)
                offset += view.byteCount
            }
            #expect(offset == raw.count)
        }
    }

    /// Bodies: decode with the header the encoder returned (what a store key carries).
    @Test(arguments: seeds)
    func bodiesRoundTrip(seed: UInt64) throws {
        var generator = RandomEvents(seed: seed &+ 100)
        var strings = StringTable()
        var encoder = RecordEncoder()
        for _ in 0..<1000 {
            let event = generator.event()
            encoder.removeAll()
            let record = try encoder.appendBody(event, strings: &strings)
            #expect(record.range == 0..<encoder.count)
            #expect(record.header.time == event.time)
            #expect((record.header.onboarding == nil) == (event.meta == nil))
            #expect(record.session == event.session.flatMap { strings.id(of: $0) })
            try encoder.withUnsafeBytes { raw in
                let view = try RecordView(body: raw, header: record.header)
                #expect(try view.event(strings: strings) == event)
                try ViewChecks.expectViewAgrees(view, with: event, strings: strings)
                // The key's fixed-width form carries the same header.
                let keyed = RecordHeader(
                    time: record.header.time, keyOnboarding: record.header.keyOnboarding,
                    keyScreenIndex: record.header.keyScreenIndex)
                #expect(keyed == record.header)
            }
        }
    }

    @Test(arguments: seeds)
    func batchFileRoundTrip(seed: UInt64) throws {
        var generator = RandomEvents(seed: seed &+ 200)
        let events = (0..<2000).map { _ in generator.event() }
        var writer = BatchWriter(blockSize: 4096)
        for event in events { try writer.append(event) }
        let file = writer.finish()
        #expect(try BatchReader.events(in: file) == events)
    }
}

enum ViewChecks {
    /// Every view accessor agrees with the owned event.
    static func expectViewAgrees(_ view: RecordView, with event: Event, strings: StringTable) throws {
        func id(_ s: String?) -> StringID? { s.map { strings.id(of: $0)! } }
        #expect(view.kind == event.kind)
        #expect(view.time == event.time)
        #expect(view.hasMeta == (event.meta != nil))
        #expect(view.onboarding == id(event.meta?.onboardingID))
        #expect(view.screenIndex == event.meta?.screenIndex)
        #expect(view.screenClientID == id(event.meta?.screenClientID))
        #expect(view.totalScreens == event.meta?.totalScreens)
        #expect(view.session == id(event.session))
        #expect(view.profile == id(event.profile))
        #expect(view.placement == id(event.placement))
        #expect(view.variation == id(event.variation))
        switch view.eventID {
        case nil: #expect(event.eventID == nil)
        case .string(let ref): #expect(strings.string(for: ref) == event.eventID)
        case .some(let uuid): #expect(uuid.uuidString == event.eventID)
        }
        var expectedChoices: [Choice] = []
        switch event.payload {
        case .analytics(let a):
            if case .unknown(let name) = a {
                #expect(view.analyticsName == .unknown(id(name)!))
            } else {
                #expect(view.analyticsName == .known(a.knownName!))
            }
            #expect(view.knownAnalyticsName == a.knownName)
            if case .screenCompleted(let element, let reply) = a {
                #expect(view.elementID == id(element))
                #expect(view.reply == id(reply))
            } else {
                #expect(view.elementID == nil)
                #expect(view.reply == nil)
            }
        case .stateUpdated(let update):
            #expect(view.analyticsName == nil)
            #expect(view.elementID == id(update.elementID))
            #expect(view.elementType == update.value.elementType)
            switch update.value {
            case .select(let c): expectedChoices = [c]
            case .multiSelect(let cs): expectedChoices = cs
            case .input(let input):
                #expect(view.inputType == input.inputType)
                switch input {
                case .text(let s), .email(let s): #expect(view.inputText == id(s))
                case .number(let d): #expect(view.number?.bitPattern == d.bitPattern)
                }
            case .datePicker(let date): #expect(view.date == date)
            }
        case .openPaywall(let a), .custom(let a), .close(let a):
            #expect(view.actionID == id(a))
        case .onboardingLoaded:
            #expect(view.actionID == nil)
        case .error(let e):
            #expect(view.errorDomain == id(e.domain))
            #expect(view.errorCode == e.code)
            #expect(view.errorMessage == id(e.message))
        }
        let choices = Array(view.choices)
        #expect(choices.count == view.choices.count)
        #expect(
            choices == expectedChoices.map { ChoiceRef(id: id($0.id)!, value: id($0.value)!, label: id($0.label)!) })
    }
}
