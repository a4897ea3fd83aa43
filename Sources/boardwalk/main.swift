import BoardwalkCLI

BoardwalkCLI.main()
