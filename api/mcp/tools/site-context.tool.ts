import { loadSiteContext } from '../../routes/context/context.routes.ts';
import { siteRecommendations } from '../../routes/revenue/recommendations.ts';
import { SiteContextObject } from '../../routes/context/context.schema.ts';
import { defineTool, envOf, environmentArg, siteArg } from './tool.ts';

export const siteContextTool = defineTool({
  name: 'get_site_context',
  title: 'Site context',
  description:
    'Worst pages, active issues, recent deploys with verdicts, active alerts and top fixes of a site in one call.',
  input: { site_id: siteArg, environment: environmentArg },
  output: SiteContextObject,
  async run(c, a, siteId) {
    const data = await loadSiteContext(c.db, siteId, envOf(a.environment), c.now(), siteRecommendations);
    const worst = data.pages.items[0];
    return {
      data,
      summary:
        `Overall score ${data.overall_score} (${data.overall_trend}); ${data.issues.total} active issue(s), ${data.alerts.total} active alert(s)` +
        (worst ? `; worst page ${worst.page} at ${worst.score}` : '') +
        (data.deploys.items[0]
          ? `; latest deploy ${data.deploys.items[0].version}: ${data.deploys.items[0].verdict}`
          : ''),
    };
  },
});
