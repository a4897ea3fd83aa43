import BoardwalkCodec
import BoardwalkModel

/// One stored event, borrowed and not yet decoded: its seq, time and key fields, and its record body.
///
/// The body borrows the store's memory map. In a read transaction (``Store/read(_:)``) LMDB reuses no page a
/// reader's snapshot holds, so a record copied out of a scan callback stays valid until that transaction ends
/// (the query layer collects many sessions' records this way before reading them); anywhere else, treat it as
/// valid only inside the callback that received it (``Snapshot/forEachRecord(onboarding:screens:time:_:)``).
///
/// Decode what you read: ``fields()`` reads the few fields a session fold needs (see `RecordFields` for what
/// it checks and skips), ``view()`` the whole record, validated.
@usableFromInline
package struct EventRecord {
    /// The event's arrival sequence number.
    @usableFromInline package let seq: UInt64
    /// When the event happened, in microseconds since the epoch.
    @usableFromInline package let timeMicroseconds: Int64
    /// The key's onboarding (``RecordFormat/noOnboarding`` for an event without `meta`) and screen index.
    @usableFromInline package let keyOnboarding: StringID
    @usableFromInline package let keyScreen: UInt16
    /// The record body (time, onboarding and screen are in the key). Borrowed from the read transaction.
    @usableFromInline package let body: UnsafeRawBufferPointer
    /// Strings in the dictionary when the snapshot began: every id a record holds is below this.
    @usableFromInline let stringLimit: StringID

    @inlinable
    init(
        seq: UInt64, time: Int64, onboarding: StringID, screen: UInt16, body: UnsafeRawBufferPointer,
        stringLimit: StringID
    ) {
        self.seq = seq
        timeMicroseconds = time
        keyOnboarding = onboarding
        keyScreen = screen
        self.body = body
        self.stringLimit = stringLimit
    }

    /// The fields the key carries: time, onboarding and screen index.
    @inlinable
    package var header: RecordHeader {
        RecordHeader(
            time: Timestamp(microseconds: timeMicroseconds), keyOnboarding: keyOnboarding, keyScreenIndex: keyScreen)
    }

    /// The fields of the record a session fold reads (up to `extent`), without decoding the rest.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` (carrying the `CodecError`) when a field it
    ///   reads is damaged. Damage in the fields it skips is not detected here (``view()`` and the store's
    ///   check find it).
    @inlinable @inline(__always)
    package func fields(_ extent: RecordFields.Extent = .all) throws -> RecordFields {
        do {
            return try RecordFields(body: body, header: header, stringLimit: stringLimit, extent: extent)
        } catch {
            throw corrupt(error)
        }
    }

    /// The whole record, decoded and validated, as a scan by ``Snapshot/forEachEvent(onboarding:screens:time:_:)`` hands it out.
    /// - Throws: ``StoreError`` with ``StoreError/Kind/corrupt`` (carrying the `CodecError`) when the record does not decode.
    package func view() throws -> EventView {
        do {
            return EventView(seq: seq, record: try RecordView(body: body, header: header, stringLimit: stringLimit))
        } catch {
            throw corrupt(error)
        }
    }

    @usableFromInline
    func corrupt(_ error: CodecError) -> StoreError {
        undecodableRecord(seq: seq, onboarding: keyOnboarding, screen: keyScreen, error)
    }
}
