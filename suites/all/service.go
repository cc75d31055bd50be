package all

import _ "github.com/tableconform/conform/suites/service"
