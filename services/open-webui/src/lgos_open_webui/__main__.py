from lgos_open_webui.cli import main

main()
