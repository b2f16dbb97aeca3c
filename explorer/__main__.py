from explorer.cli.entry import main

main()
