import BoardwalkModel

extension RecordView {
    /// Builds the owned ``BoardwalkModel/Event``, resolving every string id through `strings`.
    ///
    /// With an array-backed resolver each string field costs a retain, not an allocation; the event's
    /// arrays (multi-select choices) and an inline-UUID event id (formatted into a new 36-byte string)
    /// are the only allocations.
    /// - Throws: ``CodecError/Reason/unresolvedString(id:field:)`` at the record's offset when `strings`
    ///   has no string for an id.
    /// - Complexity: O(number of fields).
    @inlinable
    public func event<R: StringResolver>(strings: R) throws(CodecError) -> Event {
        @inline(__always)
        func resolve(_ id: StringID, _ field: String) throws(CodecError) -> String {
            guard let s = strings.string(for: id) else {
                throw CodecError(offset: offset, reason: .unresolvedString(id: id, field: field))
            }
            return s
        }
        @inline(__always)
        func resolveOptional(_ id: StringID, _ field: String) throws(CodecError) -> String? {
            id == RecordFormat.absent ? nil : try resolve(id, field)
        }

        var meta: Meta? = nil
        if hasMeta {
            meta = Meta(
                onboardingID: try resolve(onboardingRef, "meta.onboarding_id"),
                screenClientID: try resolve(screenClientRef, "meta.screen_cid"),
                screenIndex: Int(screen),
                totalScreens: Int(truncatingIfNeeded: total))
        }
        let eventID: String?
        switch self.eventID {
        case nil: eventID = nil
        case .string(let id): eventID = try resolve(id, "event_id")
        case .uuid(let hi, let lo, let upper): eventID = formatUUID(hi: hi, lo: lo, upper: upper)
        }

        let payload: Payload
        switch kind {
        case .analytics:
            let code = sub & 0x0F
            if code == RecordFormat.analyticsUnknown {
                payload = .analytics(.unknown(name: try resolve(r1, "name")))
            } else {
                switch AnalyticsName(code: code)! {
                case .onboardingStarted: payload = .analytics(.onboardingStarted)
                case .screenPresented: payload = .analytics(.screenPresented)
                case .screenCompleted:
                    payload = .analytics(
                        .screenCompleted(
                            elementID: try resolveOptional(r2, "element_id"), reply: try resolveOptional(r3, "reply")))
                case .secondScreenPresented: payload = .analytics(.secondScreenPresented)
                case .registrationScreenPresented: payload = .analytics(.registrationScreenPresented)
                case .productsScreenPresented: payload = .analytics(.productsScreenPresented)
                case .userEmailCollected: payload = .analytics(.userEmailCollected)
                case .onboardingCompleted: payload = .analytics(.onboardingCompleted)
                }
            }
        case .stateUpdated:
            let element = try resolve(r0, "element_id")
            let value: StateValue
            switch sub & 0x0F {
            case RecordFormat.valueSelect:
                value = .select(
                    Choice(
                        id: try resolve(r1, "value.id"), value: try resolve(r2, "value.value"),
                        label: try resolve(r3, "value.label")))
            case RecordFormat.valueMultiSelect:
                var choices: [Choice] = []
                choices.reserveCapacity(choicesCount)
                for c in self.choices {
                    choices.append(
                        Choice(
                            id: try resolve(c.id, "value[].id"), value: try resolve(c.value, "value[].value"),
                            label: try resolve(c.label, "value[].label")))
                }
                value = .multiSelect(choices)
            case RecordFormat.valueText: value = .input(.text(try resolve(r1, "value.value")))
            case RecordFormat.valueEmail: value = .input(.email(try resolve(r1, "value.value")))
            case RecordFormat.valueNumber: value = .input(.number(Double(bitPattern: n0)))
            default: value = .datePicker(date!)
            }
            payload = .stateUpdated(StateUpdate(elementID: element, value: value))
        case .openPaywall: payload = .openPaywall(actionID: try resolve(r1, "action_id"))
        case .custom: payload = .custom(actionID: try resolve(r1, "action_id"))
        case .close: payload = .close(actionID: try resolve(r1, "action_id"))
        case .onboardingLoaded: payload = .onboardingLoaded
        case .error:
            payload = .error(
                OnboardingError(
                    domain: try resolve(r1, "error.domain"), code: Int(truncatingIfNeeded: Int64(bitPattern: n0)),
                    message: try resolve(r2, "error.message")))
        }
        let session = try resolveOptional(sessionRef, "session")
        let profile = try resolveOptional(profileRef, "profile")
        let placement = try resolveOptional(placementRef, "placement")
        let variation = try resolveOptional(variationRef, "variation")
        return Event(
            time: time, session: session, profile: profile, eventID: eventID, placement: placement,
            variation: variation, meta: meta, payload: payload)
    }
}

extension Event {
    /// Decodes the full record that fills `bytes` (exactly one record, nothing after it).
    ///
    /// - Throws: ``CodecError`` for malformed bytes, trailing bytes (``CodecError/Reason/trailingBytes``),
    ///   or ids `strings` cannot resolve.
    /// - Complexity: O(record length).
    @inlinable
    public init<R: StringResolver>(record bytes: UnsafeRawBufferPointer, strings: R) throws(CodecError) {
        let view = try RecordView(record: bytes)
        guard view.byteCount == bytes.count else { throw CodecError(offset: view.byteCount, reason: .trailingBytes) }
        self = try view.event(strings: strings)
    }

    /// Decodes a record body that fills `bytes`, with the time, onboarding and screen from `header`.
    /// - Throws: ``CodecError`` for malformed bytes or ids `strings` cannot resolve.
    @inlinable
    public init<R: StringResolver>(body bytes: UnsafeRawBufferPointer, header: RecordHeader, strings: R)
        throws(CodecError)
    {
        self = try RecordView(body: bytes, header: header).event(strings: strings)
    }
}
