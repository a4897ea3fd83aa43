import BoardwalkCodec
import BoardwalkJSON
import Testing

/// What the store refuses at append so that an export reads back (`RecordFormat.maxStringBytes`, `maxChoices`,
/// `maxLineBytes`) must be the NDJSON reader's default limits: the two targets do not depend on each other, so
/// the constants are written twice and checked here.
@Test func appendLimitsAreTheReadersDefaults() {
    let reader = JSONReaderLimits()
    #expect(RecordFormat.maxStringBytes == reader.maxStringBytes)
    #expect(RecordFormat.maxChoices == reader.maxChoices)
    #expect(RecordFormat.maxLineBytes == reader.maxLineBytes)
}
