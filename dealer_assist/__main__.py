from dealer_assist.cli import main

raise SystemExit(main())
