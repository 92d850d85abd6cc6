/**
 * Small gazetteers and stopword lists for the offline extractor. They name classes of things
 * (foods, stacks, relatives, pets, conditions) so entities get a kind; rules never depend on a
 * list being complete, they only fall back to a generic kind when a word is missing.
 */

/** Software stack names (lowercase) → entity kind. */
export const TECH_KINDS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    language: 'python go golang rust java typescript javascript kotlin swift ruby php scala elixir haskell lua dart c c++ c# sql bash perl clojure erlang zig julia r matlab',
    framework:
      'gin echo spring springboot django flask fastapi react vue angular svelte next.js nuxt express nestjs rails laravel node.js node deno bun flutter pytorch tensorflow pandas numpy langchain tailwind',
    database:
      'postgresql postgres mysql redis mongodb sqlite elasticsearch kafka rabbitmq clickhouse chroma cassandra dynamodb mariadb oracle neo4j milvus qdrant pgvector',
    infra: 'kubernetes k8s docker aws gcp azure terraform temporal linux nginx vercel heroku helm grpc graphql',
    tool: 'git github gitlab vscode vim neovim emacs intellij jira figma notion excel',
  }).flatMap(([kind, names]) => names.split(' ').map((n) => [n, kind] as const)),
);

/** Foods and drinks, for entity kinds and diet relations. */
export const ZH_FOODS = new Set(
  '花生 香菜 咖啡 美式咖啡 拿铁 茶 绿茶 红茶 奶茶 牛奶 鸡蛋 海鲜 虾 螃蟹 鱼 牛肉 猪肉 羊肉 鸡肉 肉 寿司 火锅 辣椒 辣 榴莲 芒果 芝麻 坚果 麸质 乳糖 酒 啤酒 红酒 白酒 可乐 巧克力 冰淇淋 面条 米饭 饺子 包子 大蒜 蒜 葱 姜 洋葱 香蕉 苹果 草莓 蘑菇 豆腐 盐 糖 甜食 川菜 粤菜 湘菜 素食 披萨 汉堡 烧烤 凉拌菜 水果 蔬菜 芹菜 韭菜 菠菜 鸭肉 内脏 奶酪 酸奶 豆浆 蜂蜜'.split(' '),
);

/** Foods and drinks, for entity kinds and diet relations. */
export const EN_FOODS = new Set(
  'peanut peanuts cilantro coriander coffee tea milk egg eggs seafood shellfish shrimp prawns fish chicken beef pork lamb meat sushi chili gluten dairy lactose nuts nut soy wheat sesame alcohol wine beer chocolate risotto salmon mushroom mushrooms khachapuri curry chickpea chickpeas spinach pasta pizza tofu garlic onion onions mango strawberries banana avocado sugar salt spicy cheese bread rice noodles ramen burger burgers steak bacon olives tomatoes coconut'.split(
    ' ',
  ),
);

/** Relatives: a statement about one is about the user's family. */
export const ZH_FAMILY = new Set(
  '妈妈 爸爸 母亲 父亲 老妈 老爸 老婆 老公 妻子 丈夫 太太 先生 爱人 对象 女朋友 男朋友 女儿 儿子 孩子 小孩 宝宝 哥哥 姐姐 弟弟 妹妹 爷爷 奶奶 外公 外婆 姥姥 姥爷 岳母 岳父 婆婆 公公 家人'.split(' '),
);

/** Relatives: a statement about one is about the user's family. */
export const EN_FAMILY = new Set(
  'mom mum mother dad father wife husband partner spouse girlfriend boyfriend fiance fiancee son daughter kid kids child children baby brother sister grandma grandpa grandmother grandfather parents family twins'.split(
    ' ',
  ),
);

/** Pet species. */
export const ZH_PETS = new Set('猫 猫咪 小猫 狗 狗狗 小狗 仓鼠 兔子 鹦鹉 金鱼 乌龟 柯基 柴犬 金毛 泰迪 布偶 英短 橘猫'.split(' '));
/** Pet species. */
export const EN_PETS = new Set('dog dogs puppy cat cats kitten hamster rabbit bunny parrot goldfish turtle corgi labrador retriever'.split(' '));

/** Health conditions, named or by suffix (…病/症/炎). */
export const ZH_CONDITIONS =
  /高血压|低血压|高血脂|高血糖|糖尿病|哮喘|胃病|胃炎|心脏病|痛风|贫血|抑郁症|焦虑症|失眠|偏头痛|乳糖不耐受?|鼻炎|湿疹|甲亢|甲减|过敏性鼻炎|脂肪肝|颈椎病|腰椎间盘突出|近视|色盲|癫痫|(?:(?![我你他她有的了得是患])\p{Script=Han}){1,3}[病症炎]/u;
/** Health conditions, named or by suffix (…itis). */
export const EN_CONDITIONS =
  /\b(?:type [12] diabetes|diabetes|asthma|hypertension|high blood pressure|high cholesterol|celiac(?: disease)?|ibs|crohn's|migraines?|adhd|anxiety|depression|arthritis|gout|eczema|lactose intolerance|insomnia|epilepsy|anemia|gerd|acid reflux|sleep apnea|[a-z]+itis)\b/iu;

/** Cities jieba may not tag as places. */
export const ZH_CITIES = new Set(
  '北京 上海 杭州 深圳 广州 成都 重庆 天津 南京 武汉 西安 苏州 长沙 厦门 青岛 大连 宁波 郑州 济南 合肥 福州 昆明 沈阳 哈尔滨 长春 石家庄 南昌 贵阳 南宁 海口 三亚 拉萨 兰州 乌鲁木齐 呼和浩特 香港 澳门 台北 东京 大阪 京都 首尔 新加坡 伦敦 巴黎 纽约 旧金山 洛杉矶 西雅图 柏林 悉尼 温哥华 多伦多 曼谷'.split(' '),
);

/** Chinese place-like suffixes for words jieba does not tag as places (植物园, 海洋馆). */
export const ZH_PLACE_SUFFIX = /(?:[省市区县镇村园馆山湖寺街路]|公园|广场|机场|车站|医院|学校|大学|商场|超市|公司|餐厅|饭店|咖啡馆)$/u;

/** Human languages ("中文", "English"), not programming languages. */
export const HUMAN_LANGUAGES = /中文|英文|英语|汉语|日语|日文|韩语|法语|德语|西班牙语|粤语|普通话|\b(?:English|Chinese|Mandarin|Cantonese|Spanish|French|German|Japanese|Korean|Italian|Portuguese|Russian|Arabic)\b/u;

/** Chinese occupations end in these; "我是X" with such an X is a job. */
export const ZH_JOB_SUFFIX =
  /(?:工程师|程序员|开发|架构师|设计师|产品经理|经理|总监|主管|老师|教师|教授|医生|护士|律师|会计|学生|研究生|博士|博士生|本科生|创业者|老板|司机|厨师|作家|记者|警察|工人|职员|专员|顾问|分析师|运营|销售|主播|博主|自由职业者|全职妈妈|全职爸爸|科学家|研究员|实习生|[员师家])$/u;

/** Occupations; "I'm a X" with such an X is a job. */
export const EN_JOBS = new Set(
  'engineer dev developer programmer designer manager director nurse doctor physician teacher professor lawyer accountant student researcher scientist consultant analyst writer journalist chef cook driver pilot pharmacist dentist therapist architect artist musician photographer marketer salesperson founder ceo cto pm freelancer contractor intern lecturer librarian mechanic electrician plumber carpenter firefighter officer paramedic veterinarian vet editor translator tutor barista waiter waitress cashier recruiter'.split(
    ' ',
  ),
);

/** Function words never used as keywords. */
export const ZH_STOPWORDS = new Set(
  '我 我们 你 你们 他 她 它 他们 咱们 自己 的 了 是 有 在 会 要 想 很 都 也 就 还 吧 吗 呢 啊 呀 哦 嘛 啦 这 那 这个 那个 这些 那些 一下 一点 一些 东西 时候 什么 怎么 可以 能 让 给 把 被 跟 和 与 及 或 但 但是 不过 因为 所以 如果 然后 已经 现在 目前 最近 以后 今后 之前 之后 真的 特别 非常 比较 一直 一般 平时 通常 总是 老是 经常 每天 其实 感觉 觉得 知道 说 做 用 去 来 到 上 下 里 中 个 次 把 得 地 着 过 又 再 才 只 多 少 太 最 更 好 挺 蛮 超 不 没 没有 别 请 帮 帮我 一起 事 事情 情况 问题 方面 这样 那样 这么 那么 还是 或者 以及 还有 而且 并且 就是 一定 应该 需要 打算 准备 记住 记得 告诉 谢谢 好的 这件 那件 一件 这种 那种 有点 一点点 好多 很多 不行'.split(
    ' ',
  ),
);

/** Function words never used as keywords. */
export const EN_STOPWORDS = new Set(
  "a an the and or but if then so because as of at by for with about against between into through during before after above below to from up down in out on off over under again further once here there when where why how all any both each few more most other some such no nor not only own same than too very can will just don should now i i'm i've i'd i'll me my myself we we're we've our ours ourselves you your yours he him his she her it it's its they them their what which who whom this that these those am is are was were be been being have has had having do does did doing would could might must shall may also really actually basically pretty quite much many lot lots thing things stuff get got getting gets go going goes went make made like just still even ever always never usually often sometimes please thanks thank okay ok yeah yes right now today tonight yesterday tomorrow week month year time day every one two three first last next new old good great nice well want wanted wants keep kept let lets let's know think guess feel maybe perhaps probably don't doesn't didn't can't cannot won't isn't aren't wasn't weren't i'm it's that's there's what's here's you'd you'll you're you've i'd i'll we'd we'll give gives gave stand any longer".split(
    ' ',
  ),
);
