import BoardwalkCodec
import BoardwalkModel
import FuzzSupport

let table = StringTable(strings: fuzzStrings)

/// Record decoder: untrusted bytes must decode or throw (never trap), and whatever decodes must re-encode
/// to exactly the bytes it came from (the format is canonical for a fixed dictionary).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecord(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    do throws(CodecError) {
        let view = try RecordView(record: bytes, at: 0, stringLimit: StringID(fuzzStrings.count))
        let event = try view.event(strings: fuzzStrings)
        let again = reencodeRecord(event, table: table)
        if !again.elementsEqual(UnsafeRawBufferPointer(rebasing: bytes[0..<view.byteCount])) {
            fuzzFailure("record re-encodes differently: \(event)")
        }
        let reparsed = again.withUnsafeBytes { raw in
            try? RecordView(record: raw, stringLimit: StringID(fuzzStrings.count)).event(strings: fuzzStrings)
        }
        if reparsed == nil { fuzzFailure("re-encoded record does not decode") }
    } catch {
        _ = error.description  // exercise the message path
    }

    // The same bytes as a body, under a header with and without meta.
    if size > 0 {
        let header =
            data[0] & 1 == 0
            ? RecordHeader(time: Timestamp(microseconds: 1_800_000_000_000_000), onboarding: 3, screenIndex: 2)
            : RecordHeader(time: Timestamp(microseconds: -5), onboarding: nil, screenIndex: nil)
        let body = UnsafeRawBufferPointer(rebasing: bytes[1...])
        do throws(CodecError) {
            let view = try RecordView(body: body, header: header)
            for choice in view.choices { _ = choice.id &+ choice.value &+ choice.label }
            _ = try? view.event(strings: fuzzStrings)
            var strings = StringTable(strings: fuzzStrings)
            if let event = try? view.event(strings: fuzzStrings) {
                var encoder = RecordEncoder()
                guard let record = try? encoder.appendBody(event, strings: &strings) else {
                    fuzzFailure("a decoded body failed to encode")
                }
                if record.header != header || !encoder.bytes.elementsEqual(body) {
                    fuzzFailure("body re-encodes differently: \(event)")
                }
            }
        } catch {
            _ = error.description
        }
    }
    return 0
}
