// The embeddable library: one import for every layer an app embeds (the synthetic-data generator is not one:
// the command line, the benchmark and the tests import BoardwalkGenerator themselves).
@_exported import BoardwalkCodec
@_exported import BoardwalkJSON
@_exported import BoardwalkModel
@_exported import BoardwalkQuery
@_exported import BoardwalkStore
