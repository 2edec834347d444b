// The configuration's slices as the domain sees them (issue 29, "Declared areas": each area declares its
// slice of the configuration). The slices are read off the one configuration schema in
// config/domain-settings.ts, their one home, so their types are the schema's; an area names the ones it
// uses in its area.ts, `settings: SettingsOf<"cashouts">`, and `tsc` refuses it any other
// (settings.types.test.ts). Types only: the domain never reads the environment.

export type { DomainSettings, SettingsOf } from "../../config/domain-settings.ts";
