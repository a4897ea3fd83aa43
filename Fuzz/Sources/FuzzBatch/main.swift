import BoardwalkCodec
import BoardwalkModel
import FuzzSupport

/// Batch-file reader: untrusted bytes must read or throw (never trap, never allocate beyond the input), and
/// a file that reads must survive being written again and read back with the same events. Each input is
/// read as it is (exercising the checksums) and with its checksums repaired (exercising what they guard).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBatch(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    check(bytes)
    repairingChecksums(bytes).withUnsafeBytes { check($0) }
    return 0
}

func check(_ bytes: UnsafeRawBufferPointer) {
    var events: [Event] = []
    do throws(CodecError) {
        var reader = try BatchReader(bytes: bytes)
        while let view = try reader.next() {
            for choice in view.choices { _ = choice.id &+ choice.value &+ choice.label }
            events.append(try view.event(strings: reader.strings))
        }
    } catch {
        _ = error.description
        return
    }
    var writer = BatchWriter(blockSize: 256)
    for event in events {
        do throws(EncodingError) { try writer.append(event) } catch {
            fuzzFailure("decoded event does not encode: \(error)")
        }
    }
    let file = writer.finish()
    guard let again = try? BatchReader.events(in: file) else { fuzzFailure("rewritten file does not read") }
    // Compare encodings rather than events: a NaN number input is not equal to itself.
    let table = StringTable(strings: fuzzStrings)
    guard again.count == events.count,
        zip(again, events).allSatisfy({ reencodeRecord($0, table: table) == reencodeRecord($1, table: table) })
    else { fuzzFailure("rewritten file reads back different events") }
}
